import { useState } from 'preact/hooks';
import { api, enc, request } from '../api';
import { link } from '../router';
import { ErrorBox, Modal, Pager, cellText, useAction, useLoad } from '../ui';
import type { Column } from './table';

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'];
const AUTO = new Set(['id', 'created_at', 'updated_at']);
const LIMIT = 50;

export interface Filter {
  column: string;
  op: string;
  value: string;
}

/** Text typed in a cell or form → the JSON value for the column's type ("NULL" is null). */
export function parseValue(col: Column, text: string): unknown {
  if (text === 'NULL' || (text === '' && col.nullable && col.type !== 'string')) return null;
  if (col.type === 'integer' || col.type === 'float') return Number(text);
  if (col.type === 'boolean') return text === 'true';
  if (col.type === 'json') return JSON.parse(text);
  return text;
}

function filterQuery(filters: Filter[]): string[] {
  return filters
    .filter((f) => f.column && (f.value !== '' || f.op === 'is'))
    .map((f) => `${enc(f.column)}=${f.op}.${f.op === 'in' ? `(${f.value})` : enc(f.value || 'null')}`);
}

/** Filters from the page's query string (links from foreign keys arrive as ?col=eq.value). */
function initialFilters(): Filter[] {
  const out: Filter[] = [];
  new URLSearchParams(location.search).forEach((v, k) => {
    const dot = v.indexOf('.');
    if (dot > 0 && OPERATORS.includes(v.slice(0, dot))) out.push({ column: k, op: v.slice(0, dot), value: v.slice(dot + 1) });
  });
  return out;
}

function FilterBar(props: { columns: Column[]; filters: Filter[]; onChange: (f: Filter[]) => void }) {
  const [draft, setDraft] = useState<Filter>({ column: props.columns[0]?.name ?? '', op: 'eq', value: '' });
  return (
    <form
      class="filters"
      aria-label="Filter rows"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange([...props.filters, draft]);
        setDraft({ ...draft, value: '' });
      }}
    >
      <label for="f-col">Column</label>
      <select id="f-col" value={draft.column} onChange={(e) => setDraft({ ...draft, column: e.currentTarget.value })}>
        {props.columns.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>
      <label for="f-op">Operator</label>
      <select id="f-op" value={draft.op} onChange={(e) => setDraft({ ...draft, op: e.currentTarget.value })}>
        {OPERATORS.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
      <label for="f-value">Value</label>
      <input id="f-value" value={draft.value} placeholder={draft.op === 'in' ? 'a,b,c' : draft.op === 'is' ? 'null' : ''} onInput={(e) => setDraft({ ...draft, value: e.currentTarget.value })} />
      <button type="submit">Add filter</button>
      {props.filters.map((f, i) => (
        <button key={i} type="button" class="chip" aria-label={`Remove filter ${f.column} ${f.op} ${f.value}`} onClick={() => props.onChange(props.filters.filter((_, j) => j !== i))}>
          {f.column} {f.op} {f.value} ✕
        </button>
      ))}
    </form>
  );
}

function Cell(props: { table: string; col: Column; row: Record<string, unknown>; pk: string; onSaved: () => void }) {
  const { col, row } = props;
  const [editing, setEditing] = useState(false);
  const act = useAction();
  const v = row[col.name];
  if (editing) {
    const text = v === null ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return (
      <td>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const input = (e.currentTarget as HTMLFormElement).elements.namedItem('v') as HTMLInputElement;
            const ok = await act.run(() =>
              api(`/api/database/records/${enc(props.table)}?${enc(props.pk)}=eq.${enc(String(row[props.pk]))}`, {
                method: 'PATCH',
                body: { [col.name]: parseValue(col, input.value) },
              }),
            );
            if (ok) {
              setEditing(false);
              props.onSaved();
            }
          }}
        >
          <input name="v" aria-label={`New value of ${col.name}`} defaultValue={text} autoFocus onKeyDown={(e) => e.key === 'Escape' && setEditing(false)} />
          <ErrorBox error={act.error} />
        </form>
      </td>
    );
  }
  const fk = col.foreignKey;
  return (
    <td class={v === null ? 'null' : col.type === 'json' ? 'json' : undefined}>
      {fk && v !== null ? (
        <a {...link(`/tables/${enc(fk.table)}?${enc(fk.column)}=eq.${enc(String(v))}`)} title={`Open the ${fk.table} row`}>
          {cellText(v)}
        </a>
      ) : null}
      <button type="button" class="cell" aria-label={`Edit ${col.name}: ${cellText(v)}`} onClick={() => setEditing(true)}>
        {fk && v !== null ? '✎' : cellText(v)}
      </button>
    </td>
  );
}

function InsertRow(props: { table: string; columns: Column[]; onClose: () => void; onDone: () => void }) {
  const act = useAction();
  const cols = props.columns.filter((c) => !AUTO.has(c.name));
  return (
    <Modal title="Insert row" onClose={props.onClose}>
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget as HTMLFormElement);
          const ok = await act.run(async () => {
            const row: Record<string, unknown> = {};
            for (const c of cols) {
              const text = String(form.get(c.name) ?? '');
              if (text !== '' || c.type === 'string') row[c.name] = parseValue(c, text);
            }
            await api(`/api/database/records/${enc(props.table)}`, { method: 'POST', body: [row] });
          });
          if (ok) props.onDone();
        }}
      >
        {cols.map((c) => (
          <div key={c.name}>
            <label for={`ins-${c.name}`}>
              {c.name} <span class="muted">{c.type}{c.nullable ? '' : ', required'}</span>
            </label>
            <input id={`ins-${c.name}`} name={c.name} placeholder={c.default ?? ''} />
          </div>
        ))}
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            Insert
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** A page of rows: sort, filters, insert, inline edit, delete. Never loads the whole table. */
export function Rows({ table, columns }: { table: string; columns: Column[] }) {
  const [offset, setOffset] = useState(0);
  // Rows keep their place while edited: by creation time when the table has it.
  const [order, setOrder] = useState<string | null>(columns.some((c) => c.name === 'created_at') ? 'created_at.asc' : null);
  const [filters, setFilters] = useState<Filter[]>(initialFilters);
  const [inserting, setInserting] = useState(false);
  const del = useAction();
  const pk = columns.find((c) => c.isPrimaryKey)?.name ?? 'id';
  const { data, error, reload } = useLoad(async () => {
    const q = [`limit=${LIMIT}`, `offset=${offset}`, ...(order ? [`order=${order}`] : []), ...filterQuery(filters)];
    const r = await request(`/api/database/records/${enc(table)}?${q.join('&')}`);
    return { rows: (await r.json()) as Record<string, unknown>[], total: Number(r.headers.get('x-total-count') ?? 0) };
  }, [table, offset, order, JSON.stringify(filters)]);
  const sortBy = (c: string) => {
    setOrder(order === `${c}.asc` ? `${c}.desc` : `${c}.asc`);
    setOffset(0);
  };
  return (
    <div>
      <div class="row">
        <FilterBar columns={columns} filters={filters} onChange={(f) => (setFilters(f), setOffset(0))} />
        <button type="button" class="primary" onClick={() => setInserting(true)}>
          Insert row
        </button>
      </div>
      <ErrorBox error={error ?? del.error} />
      <div class="grid-wrap" tabIndex={0} role="region" aria-label={`Rows of ${table}`}>
        <table class="grid">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.name} scope="col" aria-sort={order === `${c.name}.asc` ? 'ascending' : order === `${c.name}.desc` ? 'descending' : undefined}>
                  <button type="button" class="sort" onClick={() => sortBy(c.name)}>
                    {c.name} {order === `${c.name}.asc` ? '▲' : order === `${c.name}.desc` ? '▼' : ''}
                  </button>
                </th>
              ))}
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data?.rows.map((row) => (
              <tr key={String(row[pk])}>
                {columns.map((c) => (
                  <Cell key={c.name} table={table} col={c} row={row} pk={pk} onSaved={reload} />
                ))}
                <td>
                  <button
                    type="button"
                    class="ghost danger"
                    aria-label={`Delete row ${String(row[pk])}`}
                    onClick={() =>
                      confirm(`Delete row ${String(row[pk])}?`) &&
                      void del.run(() => request(`/api/database/records/${enc(table)}?${enc(pk)}=eq.${enc(String(row[pk]))}`, { method: 'DELETE' })).then(reload)
                    }
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {data && <Pager offset={offset} limit={LIMIT} total={data.total} onOffset={setOffset} />}
      {inserting && <InsertRow table={table} columns={columns} onClose={() => setInserting(false)} onDone={() => (setInserting(false), reload())} />}
    </div>
  );
}
