// A page of rows in the grid: sort, filters, typed in-place editing, the side panel for whole
// rows, insert, select and delete (confirmed), CSV import, CSV/JSON export. Never loads the
// whole table to show it.
import { useState } from 'preact/hooks';
import { enc, request } from '../api';
import { Download, FileUp, Icon, Pencil, Plus, Table2, Trash2 } from '../components/icons';
import { Grid, type GridColumn } from '../grid/grid';
import { Button, ConfirmDialog, EmptyState, ErrorBox, Pager, cellText, toast, useAction, useLoad } from '../ui';
import { Cell } from './cell';
import { CsvImport, exportRows } from './csv';
import { type Filter, FilterBar, filterQuery, initialFilters } from './filters';
import { RowPanel, useEnums } from './rowpanel';
import type { Column } from './table-types';

export { OPERATORS, parseValue } from './filters';
const LIMIT = 50;
type Row = Record<string, unknown>;

/** A list of keys as the records API's `in` filter takes them (each quoted). */
const inList = (keys: string[]) => `in.(${keys.map((k) => `"${k.replace(/["\\]/g, '\\$&')}"`).join(',')})`;

function DeleteRows(props: { table: string; pk: string; keys: string[]; onClose: () => void; onDone: () => void }) {
  const act = useAction();
  const n = props.keys.length;
  const what = n === 1 ? `row ${props.keys[0]}` : `${n} rows`;
  return (
    <ConfirmDialog
      title={n === 1 ? 'Delete row' : `Delete ${n} rows`}
      confirmLabel={n === 1 ? 'Delete row' : `Delete ${n} rows`}
      danger
      error={<ErrorBox error={act.error} />}
      onClose={props.onClose}
      onConfirm={async () => {
        const url = `/api/database/records/${enc(props.table)}?${enc(props.pk)}=${enc(inList(props.keys))}`;
        if (await act.run(() => request(url, { method: 'DELETE' }))) {
          toast(`Deleted ${what} of ${props.table}.`);
          props.onDone();
        }
      }}
    >
      <p>
        This deletes {what} of <strong>{props.table}</strong> and cannot be undone.
      </p>
    </ConfirmDialog>
  );
}

export function Rows({ table, columns }: { table: string; columns: Column[] }) {
  const [offset, setOffset] = useState(0);
  // Rows keep their place while edited: by creation time when the table has it.
  const [order, setOrder] = useState<string | null>(
    columns.some((c) => c.name === 'created_at') ? 'created_at.asc' : null,
  );
  const [filters, setFilters] = useState<Filter[]>(initialFilters);
  const [panel, setPanel] = useState<Row | 'new' | null>(null);
  const [importing, setImporting] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [deleting, setDeleting] = useState<string[] | null>(null);
  const enums = useEnums(columns);
  const act = useAction();
  const pk = columns.find((c) => c.isPrimaryKey)?.name ?? 'id';
  const query = [...(order ? [`order=${order}`] : []), ...filterQuery(filters)];
  const { data, error, reload, loading } = useLoad(async () => {
    const r = await request(
      `/api/database/records/${enc(table)}?${[`limit=${LIMIT}`, `offset=${offset}`, ...query].join('&')}`,
    );
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
    cellClass: (r) =>
      r[c.name] === null
        ? 'null'
        : c.type === 'json'
          ? 'json'
          : c.type === 'uuid'
            ? 'clip'
            : c.type === 'datetime'
              ? 'nowrap'
              : undefined,
    cell: (r) => <Cell table={table} col={c} row={r} pk={pk} enums={enums} onSaved={reload} />,
  }));
  const key = (r: Row) => String(r[pk]);
  const filtered = filters.length > 0;
  return (
    <div class="stack">
      <div class="toolbar">
        <FilterBar columns={columns} filters={filters} onChange={(f) => (setFilters(f), setOffset(0))} />
        <Button size="sm" icon={FileUp} onClick={() => setImporting(true)}>
          Import CSV
        </Button>
        <Button size="sm" icon={Download} onClick={() => void act.run(() => exportRows(table, query, 'csv'))}>
          Export CSV
        </Button>
        <Button size="sm" icon={Download} onClick={() => void act.run(() => exportRows(table, query, 'json'))}>
          Export JSON
        </Button>
        <Button variant="primary" size="sm" icon={Plus} onClick={() => setPanel('new')}>
          Insert row
        </Button>
      </div>
      {selected.size > 0 && (
        <div class="selection-bar" role="region" aria-label="Selected rows">
          <span>{selected.size === 1 ? '1 row selected' : `${selected.size} rows selected`}</span>
          <div class="actions">
            <Button variant="danger" size="sm" icon={Trash2} onClick={() => setDeleting([...selected])}>
              Delete selected
            </Button>
            <Button variant="ghost" size="sm" onClick={() => setSelected(new Set())}>
              Clear selection
            </Button>
          </div>
        </div>
      )}
      <ErrorBox error={error ?? act.error} />
      <Grid
        label={`Rows of ${table}`}
        columns={gridColumns}
        rows={data?.rows ?? []}
        loading={loading}
        rowKey={key}
        order={order}
        onSort={sortBy}
        selection={{ selected, onChange: setSelected, name: (r) => `row ${key(r)}` }}
        empty={
          <EmptyState
            icon={Table2}
            title={filtered ? 'No row matches these filters' : `${table} has no rows yet`}
            action={
              filtered ? (
                <Button onClick={() => setFilters([])}>Clear the filters</Button>
              ) : (
                <Button variant="primary" icon={Plus} onClick={() => setPanel('new')}>
                  Insert the first row
                </Button>
              )
            }
          >
            {filtered
              ? 'Change or remove a filter to see more rows.'
              : 'Insert one here, import a CSV file, or write to it from your app with the snippets on the API tab.'}
          </EmptyState>
        }
        actions={(r) => (
          <>
            <Button
              variant="ghost"
              size="sm"
              icon={Pencil}
              aria-label={`Edit row ${key(r)}`}
              onClick={() => setPanel(r)}
            >
              Edit
            </Button>
            <Button
              variant="ghost danger"
              size="sm"
              icon={Trash2}
              aria-label={`Delete row ${key(r)}`}
              onClick={() => setDeleting([key(r)])}
            >
              Delete
            </Button>
          </>
        )}
      />
      {data && <Pager offset={offset} limit={LIMIT} total={data.total} onOffset={setOffset} />}
      {panel && (
        <RowPanel
          table={table}
          columns={columns}
          pk={pk}
          row={panel === 'new' ? null : panel}
          onClose={() => setPanel(null)}
          onDone={() => (setPanel(null), reload())}
        />
      )}
      {importing && <CsvImport table={table} columns={columns} onClose={() => setImporting(false)} onDone={reload} />}
      {deleting && (
        <DeleteRows
          table={table}
          pk={pk}
          keys={deleting}
          onClose={() => setDeleting(null)}
          onDone={() => (setDeleting(null), setSelected(new Set()), reload())}
        />
      )}
    </div>
  );
}

export { cellText, Icon };
