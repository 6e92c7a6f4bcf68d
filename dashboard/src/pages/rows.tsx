// A page of rows in the grid: sort, filters, inline and side-panel editing, insert, delete,
// CSV import, CSV/JSON export. Never loads the whole table to show it.
import { useState } from 'preact/hooks';
import { api, enc, request } from '../api';
import { Grid, type GridColumn } from '../grid/grid';
import { link } from '../router';
import { ErrorBox, Pager, cellText, useAction, useLoad } from '../ui';
import { CsvImport, exportRows } from './csv';
import { FilterBar, filterQuery, initialFilters, parseValue, type Filter } from './filters';
import { RowPanel } from './rowpanel';
import type { Column } from './table';

export { OPERATORS, parseValue } from './filters';
const LIMIT = 50;
type Row = Record<string, unknown>;

/** A cell: the whole cell is its edit button; a foreign key also links to the row it references. */
function Cell(props: { table: string; col: Column; row: Row; pk: string; onSaved: () => void }) {
  const { col, row } = props;
  const [editing, setEditing] = useState(false);
  const act = useAction();
  const v = row[col.name];
  if (editing) {
    const text = v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    const save = async (e: Event) => {
      e.preventDefault();
      const input = (e.currentTarget as HTMLFormElement).elements.namedItem('v') as HTMLInputElement;
      const url = `/api/database/records/${enc(props.table)}?${enc(props.pk)}=eq.${enc(String(row[props.pk]))}`;
      if (await act.run(() => api(url, { method: 'PATCH', body: { [col.name]: parseValue(col, input.value) } }))) {
        setEditing(false);
        props.onSaved();
      }
    };
    return (
      <form onSubmit={save}>
        <input name="v" aria-label={`New value of ${col.name}`} defaultValue={text} autoFocus onKeyDown={(e) => e.key === 'Escape' && setEditing(false)} />
        <ErrorBox error={act.error} />
      </form>
    );
  }
  const fk = col.foreignKey;
  return (
    <div class="cellbox">
      <button type="button" class="cell" aria-label={`Edit ${col.name}: ${cellText(v)}`} onClick={() => setEditing(true)}>
        {cellText(v)}
      </button>
      {fk && v !== null && (
        <a class="fklink" {...link(`/tables/${enc(fk.table)}?${enc(fk.column)}=eq.${enc(String(v))}`)} aria-label={`Open the ${fk.table} row ${cellText(v)}`}>
          ↗
        </a>
      )}
    </div>
  );
}

export function Rows({ table, columns }: { table: string; columns: Column[] }) {
  const [offset, setOffset] = useState(0);
  // Rows keep their place while edited: by creation time when the table has it.
  const [order, setOrder] = useState<string | null>(columns.some((c) => c.name === 'created_at') ? 'created_at.asc' : null);
  const [filters, setFilters] = useState<Filter[]>(initialFilters);
  const [panel, setPanel] = useState<Row | 'new' | null>(null);
  const [importing, setImporting] = useState(false);
  const act = useAction();
  const pk = columns.find((c) => c.isPrimaryKey)?.name ?? 'id';
  const query = [...(order ? [`order=${order}`] : []), ...filterQuery(filters)];
  const { data, error, reload } = useLoad(async () => {
    const r = await request(`/api/database/records/${enc(table)}?${[`limit=${LIMIT}`, `offset=${offset}`, ...query].join('&')}`);
    return { rows: (await r.json()) as Row[], total: Number(r.headers.get('x-total-count') ?? 0) };
  }, [table, offset, order, JSON.stringify(filters)]);
  const sortBy = (c: string) => {
    setOrder(order === `${c}.asc` ? `${c}.desc` : `${c}.asc`);
    setOffset(0);
  };
  const gridColumns: GridColumn<Row>[] = columns.map((c) => ({
    key: c.name,
    label: c.name,
    type: c.foreignKey ? `${c.type} → ${c.foreignKey.table}` : c.type,
    cellClass: (r) => (r[c.name] === null ? 'null' : c.type === 'json' ? 'json' : c.type === 'uuid' || c.type === 'datetime' ? 'nowrap' : undefined),
    cell: (r) => <Cell table={table} col={c} row={r} pk={pk} onSaved={reload} />,
  }));
  const del = (r: Row) =>
    confirm(`Delete row ${String(r[pk])}?`) && void act.run(() => request(`/api/database/records/${enc(table)}?${enc(pk)}=eq.${enc(String(r[pk]))}`, { method: 'DELETE' })).then(reload);
  return (
    <div class="stack">
      <div class="row">
        <FilterBar columns={columns} filters={filters} onChange={(f) => (setFilters(f), setOffset(0))} />
        <button type="button" class="primary" onClick={() => setPanel('new')}>
          Insert row
        </button>
      </div>
      <div class="row">
        <button type="button" onClick={() => setImporting(true)}>
          Import CSV
        </button>
        <button type="button" onClick={() => void act.run(() => exportRows(table, query, 'csv'))}>
          Export CSV
        </button>
        <button type="button" onClick={() => void act.run(() => exportRows(table, query, 'json'))}>
          Export JSON
        </button>
      </div>
      <ErrorBox error={error ?? act.error} />
      <Grid
        label={`Rows of ${table}`}
        columns={gridColumns}
        rows={data?.rows ?? []}
        rowKey={(r) => String(r[pk])}
        order={order}
        onSort={sortBy}
        actions={(r) => (
          <>
            <button type="button" class="ghost" aria-label={`Edit row ${String(r[pk])}`} onClick={() => setPanel(r)}>
              Edit
            </button>
            <button type="button" class="ghost danger" aria-label={`Delete row ${String(r[pk])}`} onClick={() => del(r)}>
              Delete
            </button>
          </>
        )}
      />
      {data && <Pager offset={offset} limit={LIMIT} total={data.total} onOffset={setOffset} />}
      {panel && <RowPanel table={table} columns={columns} pk={pk} row={panel === 'new' ? null : panel} onClose={() => setPanel(null)} onDone={() => (setPanel(null), reload())} />}
      {importing && <CsvImport table={table} columns={columns} onClose={() => setImporting(false)} onDone={reload} />}
    </div>
  );
}
