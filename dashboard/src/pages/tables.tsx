import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { link, navigate } from '../router';
import { Grid } from '../grid/grid';
import { runSql } from '../lib/sql';
import { Confirm, ErrorBox, Modal, useAction, useLoad } from '../ui';

export const TYPES = ['string', 'integer', 'float', 'boolean', 'uuid', 'datetime', 'date', 'json'];
export const ON_DELETE = ['NO ACTION', 'CASCADE', 'SET NULL', 'SET DEFAULT', 'RESTRICT'];

interface ColumnDraft {
  name: string;
  type: string;
  nullable: boolean;
  unique: boolean;
  defaultValue: string;
  fkTable: string;
  fkColumn: string;
  onDelete: string;
}

const blank = (): ColumnDraft => ({ name: '', type: 'string', nullable: true, unique: false, defaultValue: '', fkTable: '', fkColumn: 'id', onDelete: 'NO ACTION' });

function toColumn(c: ColumnDraft) {
  return {
    name: c.name.trim(),
    type: c.type,
    nullable: c.nullable,
    unique: c.unique,
    ...(c.defaultValue.trim() ? { defaultValue: c.defaultValue.trim() } : {}),
    ...(c.fkTable ? { foreignKey: { table: c.fkTable, column: c.fkColumn || 'id', onDelete: c.onDelete } } : {}),
  };
}

function ColumnRow(props: { c: ColumnDraft; i: number; tables: string[]; set: (c: ColumnDraft) => void; remove: () => void }) {
  const { c, i, set } = props;
  const id = (f: string) => `col-${i}-${f}`;
  return (
    <fieldset class="column">
      <legend>Column {i + 1}</legend>
      <label for={id('name')}>Name</label>
      <input id={id('name')} value={c.name} required pattern="[A-Za-z_][A-Za-z0-9_]*" onInput={(e) => set({ ...c, name: e.currentTarget.value })} />
      <label for={id('type')}>Type</label>
      <select id={id('type')} value={c.type} onChange={(e) => set({ ...c, type: e.currentTarget.value })}>
        {TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label for={id('default')}>Default (SQL)</label>
      <input id={id('default')} value={c.defaultValue} placeholder="e.g. now() or 'draft'" onInput={(e) => set({ ...c, defaultValue: e.currentTarget.value })} />
      <label class="check">
        <input type="checkbox" checked={c.nullable} onChange={(e) => set({ ...c, nullable: e.currentTarget.checked })} /> Nullable
      </label>
      <label class="check">
        <input type="checkbox" checked={c.unique} onChange={(e) => set({ ...c, unique: e.currentTarget.checked })} /> Unique
      </label>
      <label for={id('fk')}>References table</label>
      <select id={id('fk')} value={c.fkTable} onChange={(e) => set({ ...c, fkTable: e.currentTarget.value })}>
        <option value="">none</option>
        {props.tables.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      {c.fkTable && (
        <>
          <label for={id('fkcol')}>Referenced column</label>
          <input id={id('fkcol')} value={c.fkColumn} onInput={(e) => set({ ...c, fkColumn: e.currentTarget.value })} />
          <label for={id('ondelete')}>On delete</label>
          <select id={id('ondelete')} value={c.onDelete} onChange={(e) => set({ ...c, onDelete: e.currentTarget.value })}>
            {ON_DELETE.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </>
      )}
      <button type="button" class="ghost" onClick={props.remove}>
        Remove column {i + 1}
      </button>
    </fieldset>
  );
}

function CreateTable(props: { tables: string[]; onClose: () => void }) {
  const [name, setName] = useState('');
  const [rls, setRls] = useState(true);
  const [cols, setCols] = useState<ColumnDraft[]>([blank()]);
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await act.run(() => api('/api/database/tables', { method: 'POST', body: { tableName: name.trim(), rlsEnabled: rls, columns: cols.map(toColumn) } }));
    if (ok) navigate(`/tables/${enc(name.trim())}`);
  };
  return (
    <Modal title="New table" onClose={props.onClose}>
      <form onSubmit={submit} class="stack">
        <label for="table-name">Table name</label>
        <input id="table-name" value={name} required pattern="[A-Za-z_][A-Za-z0-9_]*" onInput={(e) => setName(e.currentTarget.value)} />
        <label class="check">
          <input type="checkbox" checked={rls} onChange={(e) => setRls(e.currentTarget.checked)} /> Row-level security on (recommended: without it the anon key reads and writes every row)
        </label>
        <p class="muted">id (uuid), created_at and updated_at are added for you.</p>
        {cols.map((c, i) => (
          <ColumnRow key={i} c={c} i={i} tables={props.tables} set={(n) => setCols(cols.map((x, j) => (j === i ? n : x)))} remove={() => setCols(cols.filter((_, j) => j !== i))} />
        ))}
        <button type="button" onClick={() => setCols([...cols, blank()])}>
          Add column
        </button>
        <ErrorBox error={act.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={act.busy}>
            Create table
          </button>
        </div>
      </form>
    </Modal>
  );
}

interface TableStat {
  name: string;
  rows: number;
  bytes: number;
  rls: boolean;
  realtime: boolean;
}

/** Row estimate, size, RLS and realtime of every table of schema public, in one query. */
const STATS = `select c.relname::text as name, greatest(c.reltuples, 0)::bigint as rows, pg_total_relation_size(c.oid) as bytes,
  c.relrowsecurity as rls, exists (select 1 from pg_trigger g where g.tgrelid = c.oid and g.tgname = 'plinth_realtime') as realtime
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname`;

export function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : n < 1073741824 ? `${(n / 1048576).toFixed(1)} MiB` : `${(n / 1073741824).toFixed(2)} GiB`;
}

/** The tables of schema public with their size and security: open, create, drop. */
export function Tables() {
  const { data, error, reload } = useLoad(async () => (await runSql<TableStat>(STATS)).rows.map((r) => ({ ...r, rows: Number(r.rows), bytes: Number(r.bytes) })), []);
  const [creating, setCreating] = useState(false);
  const [dropping, setDropping] = useState<string | null>(null);
  return (
    <section class="stack">
      <div class="row">
        <h1>Tables</h1>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New table
        </button>
      </div>
      <ErrorBox error={error} />
      <Grid
        label="Tables"
        rows={data ?? []}
        rowKey={(t) => t.name}
        empty="No tables yet. Create one, or run CREATE TABLE in the SQL editor."
        columns={[
          { key: 'name', label: 'Table', cell: (t) => <a {...link(`/tables/${enc(t.name)}`)}>{t.name}</a> },
          { key: 'rows', label: 'Rows (estimate)', cell: (t) => t.rows.toLocaleString('en'), cellClass: () => 'num' },
          { key: 'size', label: 'Size', cell: (t) => bytes(t.bytes), cellClass: () => 'num' },
          { key: 'rls', label: 'RLS', cell: (t) => <span class={t.rls ? 'badge' : 'badge bad'}>{t.rls ? 'on' : 'off'}</span> },
          { key: 'realtime', label: 'Realtime', cell: (t) => (t.realtime ? 'on' : 'off') },
        ]}
        actions={(t) => (
          <button type="button" class="ghost danger" aria-label={`Drop table ${t.name}`} onClick={() => setDropping(t.name)}>
            Drop
          </button>
        )}
      />
      {creating && <CreateTable tables={data?.map((t) => t.name) ?? []} onClose={() => setCreating(false)} />}
      {dropping && (
        <Confirm
          what="table"
          name={dropping}
          onClose={() => setDropping(null)}
          onConfirm={async () => {
            await api(`/api/database/tables/${enc(dropping)}`, { method: 'DELETE' });
            reload();
          }}
        />
      )}
    </section>
  );
}
