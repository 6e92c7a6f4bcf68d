import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { link, navigate } from '../router';
import { Confirm, ErrorBox, useAction, useLoad } from '../ui';
import { Rows } from './rows';
import { ON_DELETE, TYPES } from './tables';

export interface Column {
  name: string;
  type: string;
  nullable: boolean;
  unique: boolean;
  default: string | null;
  isPrimaryKey: boolean;
  foreignKey: { table: string; column: string; on_delete: string } | null;
}

interface Schema {
  tableName: string;
  rlsEnabled: boolean;
  columns: Column[];
}

interface Policy {
  name: string;
  command: string;
  permissive: boolean;
  roles: string[];
  using: string | null;
  withCheck: string | null;
}

const TABS = ['rows', 'schema', 'policies'] as const;

/** One table: its rows, its schema (the PATCH operations) and its RLS policies. */
export function TablePage({ params }: { params: string[] }) {
  const table = params[0]!;
  const tab = (TABS as readonly string[]).includes(params[1] ?? '') ? params[1]! : 'rows';
  const { data, error, reload } = useLoad(() => api<Schema>(`/api/database/tables/${enc(table)}/schema`), [table]);
  return (
    <section>
      <p class="crumbs">
        <a {...link('/tables')}>Tables</a> / {table}
      </p>
      <h1>{table}</h1>
      <nav class="tabs" aria-label="Table views">
        {TABS.map((t) => (
          <a key={t} {...link(`/tables/${enc(table)}/${t}`)} aria-current={t === tab ? 'page' : undefined}>
            {t[0]!.toUpperCase() + t.slice(1)}
          </a>
        ))}
      </nav>
      <ErrorBox error={error} />
      {data && tab === 'rows' && <Rows table={table} columns={data.columns} />}
      {data && tab === 'schema' && <SchemaEditor schema={data} onChanged={reload} />}
      {data && tab === 'policies' && <Policies table={table} rls={data.rlsEnabled} />}
    </section>
  );
}

function ColumnActions({ c, patch, onDrop }: { c: Column; patch: (body: object) => unknown; onDrop: () => void }) {
  if (c.isPrimaryKey) return <td />;
  return (
    <td class="actions">
      <button
        type="button"
        class="ghost"
        aria-label={`Rename column ${c.name}`}
        onClick={() => {
          const n = prompt(`New name for ${c.name}`, c.name);
          if (n && n !== c.name) void patch({ updateColumns: [{ columnName: c.name, newColumnName: n }] });
        }}
      >
        Rename
      </button>
      {c.foreignKey && (
        <button type="button" class="ghost" aria-label={`Drop foreign key of ${c.name}`} onClick={() => void patch({ dropForeignKeys: [c.name] })}>
          Drop FK
        </button>
      )}
      <button type="button" class="ghost danger" aria-label={`Drop column ${c.name}`} onClick={onDrop}>
        Drop
      </button>
    </td>
  );
}

function AddColumn({ patch, busy }: { patch: (body: object) => unknown; busy: boolean }) {
  const [add, setAdd] = useState({ columnName: '', type: 'string', isNullable: true, defaultValue: '' });
  return (
    <form class="inline" aria-label="Add column" onSubmit={(e) => (e.preventDefault(), void patch({ addColumns: [{ ...add, defaultValue: add.defaultValue || undefined }] }))}>
      <h2>Add column</h2>
      <label for="add-name">Name</label>
      <input id="add-name" required value={add.columnName} onInput={(e) => setAdd({ ...add, columnName: e.currentTarget.value })} />
      <label for="add-type">Type</label>
      <select id="add-type" value={add.type} onChange={(e) => setAdd({ ...add, type: e.currentTarget.value })}>
        {TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label for="add-default">Default</label>
      <input id="add-default" value={add.defaultValue} onInput={(e) => setAdd({ ...add, defaultValue: e.currentTarget.value })} />
      <label class="check">
        <input type="checkbox" checked={add.isNullable} onChange={(e) => setAdd({ ...add, isNullable: e.currentTarget.checked })} /> Nullable
      </label>
      <button type="submit" disabled={busy}>
        Add column
      </button>
    </form>
  );
}

function AddForeignKey({ columns, patch, busy }: { columns: Column[]; patch: (body: object) => unknown; busy: boolean }) {
  const [fk, setFk] = useState({ columnName: '', referenceTable: '', referenceColumn: 'id', onDelete: 'NO ACTION' });
  const submit = (e: Event) => {
    e.preventDefault();
    const { columnName, ...foreignKey } = fk;
    void patch({ addForeignKeys: [{ columnName, foreignKey }] });
  };
  return (
    <form class="inline" aria-label="Add foreign key" onSubmit={submit}>
      <h2>Add foreign key</h2>
      <label for="fk-col">Column</label>
      <select id="fk-col" required value={fk.columnName} onChange={(e) => setFk({ ...fk, columnName: e.currentTarget.value })}>
        <option value="">choose</option>
        {columns.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>
      <label for="fk-table">References table</label>
      <input id="fk-table" required value={fk.referenceTable} onInput={(e) => setFk({ ...fk, referenceTable: e.currentTarget.value })} />
      <label for="fk-ref">Referenced column</label>
      <input id="fk-ref" required value={fk.referenceColumn} onInput={(e) => setFk({ ...fk, referenceColumn: e.currentTarget.value })} />
      <label for="fk-del">On delete</label>
      <select id="fk-del" value={fk.onDelete} onChange={(e) => setFk({ ...fk, onDelete: e.currentTarget.value })}>
        {ON_DELETE.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <button type="submit" disabled={busy}>
        Add foreign key
      </button>
    </form>
  );
}

function SchemaEditor({ schema, onChanged }: { schema: Schema; onChanged: () => void }) {
  const act = useAction();
  const [dropping, setDropping] = useState<string | null>(null);
  const table = schema.tableName;
  const url = `/api/database/tables/${enc(table)}/schema`;
  const patch = (body: object) => act.run(() => api(url, { method: 'PATCH', body }).then(onChanged));
  const rename = async (e: Event) => {
    e.preventDefault();
    const n = String(new FormData(e.currentTarget as HTMLFormElement).get('newName'));
    if (await act.run(() => api(url, { method: 'PATCH', body: { renameTable: { newTableName: n } } }))) navigate(`/tables/${enc(n)}/schema`);
  };
  return (
    <div class="stack">
      <p>
        Row-level security: <strong>{schema.rlsEnabled ? 'on' : 'off'}</strong>
      </p>
      <div class="grid-wrap" tabIndex={0}>
        <table class="grid">
          <thead>
            <tr>
              {['Column', 'Type', 'Nullable', 'Default', 'References'].map((h) => (
                <th key={h} scope="col">{h}</th>
              ))}
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {schema.columns.map((c) => (
              <tr key={c.name}>
                <td>
                  {c.name}
                  {c.isPrimaryKey ? ' (primary key)' : c.unique ? ' (unique)' : ''}
                </td>
                <td>{c.type}</td>
                <td>{c.nullable ? 'yes' : 'no'}</td>
                <td>{c.default ?? ''}</td>
                <td>{c.foreignKey ? `${c.foreignKey.table}.${c.foreignKey.column} (${c.foreignKey.on_delete})` : ''}</td>
                <ColumnActions c={c} patch={patch} onDrop={() => setDropping(c.name)} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorBox error={act.error} />
      <AddColumn patch={patch} busy={act.busy} />
      <AddForeignKey columns={schema.columns} patch={patch} busy={act.busy} />
      <form class="inline" aria-label="Rename table" onSubmit={rename}>
        <h2>Rename table</h2>
        <label for="rename-table">New name</label>
        <input id="rename-table" name="newName" required />
        <button type="submit" disabled={act.busy}>
          Rename
        </button>
      </form>
      {dropping && (
        <Confirm what="column" name={dropping} onClose={() => setDropping(null)} onConfirm={() => api(url, { method: 'PATCH', body: { dropColumns: [dropping] } }).then(onChanged)} />
      )}
    </div>
  );
}

function Policies({ table, rls }: { table: string; rls: boolean }) {
  const { data, error, reload } = useLoad(() => api<{ policies: Policy[] }>(`/api/database/tables/${enc(table)}/policies`), [table]);
  return (
    <div class="stack">
      {!rls && (
        <p class="warn">
          Row-level security is off: these policies are not enforced. Turn it on in the SQL editor: <code>alter table public.{table} enable row level security</code>.
        </p>
      )}
      <ErrorBox error={error} />
      {data && data.policies.length === 0 && <p class="muted">No policies.</p>}
      {data && data.policies.length > 0 && (
        <div class="grid-wrap" tabIndex={0}>
          <table class="grid" aria-label="Policies">
            <thead>
              <tr>
                {['Name', 'Command', 'Roles', 'Using', 'With check'].map((h) => (
                  <th key={h} scope="col">{h}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {data.policies.map((p) => (
                <tr key={p.name}>
                  <td>{p.name}{p.permissive ? '' : ' (restrictive)'}</td>
                  <td>{p.command}</td>
                  <td>{p.roles.join(', ')}</td>
                  <td><code>{p.using ?? ''}</code></td>
                  <td><code>{p.withCheck ?? ''}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="row">
        <a {...link(`/sql?table=${enc(table)}`)}>Add a policy in the SQL editor</a>
        <button type="button" class="ghost" onClick={reload}>
          Refresh
        </button>
      </p>
    </div>
  );
}
