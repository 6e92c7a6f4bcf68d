// The Schema tab: columns in the grid; add, rename, change type, drop, foreign keys, rename
// the table. Every change first shows the SQL it will run.
import { useState } from 'preact/hooks';
import { enc } from '../api';
import { Grid, type GridColumn } from '../grid/grid';
import { PromptDialog } from '../components/dialog';
import { SqlConfirm } from '../lib/confirm-sql';
import { alterSql, table as qtable, ident, runSql, type ColumnChange } from '../lib/sql';
import { navigate } from '../router';
import { Card, ErrorBox } from '../ui';
import type { Column, Schema } from './table-types';
import { ON_DELETE, TYPES } from './tables';

type Pending = { title: string; sql: string; after?: () => void };

const COLUMNS: GridColumn<Column>[] = [
  {
    key: 'name',
    label: 'Column',
    cell: (c) => `${c.name}${c.isPrimaryKey ? ' (primary key)' : c.unique ? ' (unique)' : ''}`,
  },
  { key: 'type', label: 'Type', cell: (c) => <code>{c.type}</code> },
  { key: 'nullable', label: 'Nullable', cell: (c) => (c.nullable ? 'yes' : 'no') },
  { key: 'default', label: 'Default', cell: (c) => <code>{c.default ?? ''}</code> },
  {
    key: 'ref',
    label: 'References',
    cell: (c) => (c.foreignKey ? `${c.foreignKey.table}.${c.foreignKey.column} (${c.foreignKey.on_delete})` : ''),
  },
];

function AddColumn({ propose }: { propose: (c: ColumnChange) => void }) {
  const [add, setAdd] = useState({ column: '', type: 'string', nullable: true, defaultValue: '' });
  return (
    <form class="inline" aria-label="Add column" onSubmit={(e) => (e.preventDefault(), propose({ op: 'add', ...add }))}>
      <h2>Add column</h2>
      <label for="add-name">Name</label>
      <input
        id="add-name"
        required
        value={add.column}
        onInput={(e) => setAdd({ ...add, column: e.currentTarget.value })}
      />
      <label for="add-type">Type</label>
      <select id="add-type" value={add.type} onChange={(e) => setAdd({ ...add, type: e.currentTarget.value })}>
        {TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label for="add-default">Default (SQL)</label>
      <input
        id="add-default"
        value={add.defaultValue}
        onInput={(e) => setAdd({ ...add, defaultValue: e.currentTarget.value })}
      />
      <label class="check">
        <input
          type="checkbox"
          checked={add.nullable}
          onChange={(e) => setAdd({ ...add, nullable: e.currentTarget.checked })}
        />{' '}
        Nullable
      </label>
      <button type="submit">Add column</button>
    </form>
  );
}

function AddForeignKey({ columns, propose }: { columns: Column[]; propose: (c: ColumnChange) => void }) {
  const [fk, setFk] = useState({ column: '', refTable: '', refColumn: 'id', onDelete: 'NO ACTION' });
  return (
    <form
      class="inline"
      aria-label="Add foreign key"
      onSubmit={(e) => (e.preventDefault(), propose({ op: 'fk', ...fk }))}
    >
      <h2>Add foreign key</h2>
      <label for="fk-col">Column</label>
      <select id="fk-col" required value={fk.column} onChange={(e) => setFk({ ...fk, column: e.currentTarget.value })}>
        <option value="">choose</option>
        {columns.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>
      <label for="fk-table">References table</label>
      <input
        id="fk-table"
        required
        value={fk.refTable}
        onInput={(e) => setFk({ ...fk, refTable: e.currentTarget.value })}
      />
      <label for="fk-ref">Referenced column</label>
      <input
        id="fk-ref"
        required
        value={fk.refColumn}
        onInput={(e) => setFk({ ...fk, refColumn: e.currentTarget.value })}
      />
      <label for="fk-del">On delete</label>
      <select id="fk-del" value={fk.onDelete} onChange={(e) => setFk({ ...fk, onDelete: e.currentTarget.value })}>
        {ON_DELETE.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <button type="submit">Add foreign key</button>
    </form>
  );
}

export function SchemaEditor({ schema, onChanged }: { schema: Schema; onChanged: () => void }) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState<{ column: Column; what: 'name' | 'type' } | null>(null);
  const t = schema.tableName;
  const propose = (c: ColumnChange, after?: () => void) => {
    try {
      setError(null);
      const verb = {
        add: 'Add column',
        rename: 'Rename column',
        type: 'Change the type of',
        drop: 'Drop column',
        fk: 'Add a foreign key on',
      }[c.op];
      setPending({ title: `${verb} ${c.column}`, sql: alterSql(t, c), after });
    } catch (e) {
      setError(e);
    }
  };
  // The constraint's name comes from pg_constraint: the schema API gives the reference only.
  const dropFk = async (column: string) => {
    try {
      const r = await runSql<{ name: string }>(
        `select c.conname::text as name from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
          where c.conrelid = to_regclass($1) and c.contype = 'f' and a.attname = $2`,
        [qtable(t), column],
      );
      setPending({
        title: `Drop the foreign key of ${column}`,
        sql: r.rows.map((x) => `alter table ${qtable(t)} drop constraint ${ident(x.name)};`).join('\n'),
      });
    } catch (err) {
      setError(err);
    }
  };
  const renameTable = (e: Event) => {
    e.preventDefault();
    const n = String(new FormData(e.currentTarget as HTMLFormElement).get('newName'));
    try {
      setPending({
        title: `Rename table ${t}`,
        sql: `alter table ${qtable(t)} rename to ${ident(n)};`,
        after: () => navigate(`/tables/${enc(n)}/schema`),
      });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="stack">
      <Grid
        label={`Columns of ${t}`}
        rows={schema.columns}
        rowKey={(c) => c.name}
        columns={COLUMNS}
        actions={(c) =>
          c.isPrimaryKey ? null : (
            <>
              <button
                type="button"
                class="ghost"
                aria-label={`Rename column ${c.name}`}
                onClick={() => setAsking({ column: c, what: 'name' })}
              >
                Rename
              </button>
              <button
                type="button"
                class="ghost"
                aria-label={`Change type of ${c.name}`}
                onClick={() => setAsking({ column: c, what: 'type' })}
              >
                Type
              </button>
              {c.foreignKey && (
                <button
                  type="button"
                  class="ghost"
                  aria-label={`Drop foreign key of ${c.name}`}
                  onClick={() => void dropFk(c.name)}
                >
                  Drop foreign key
                </button>
              )}
              <button
                type="button"
                class="ghost danger"
                aria-label={`Drop column ${c.name}`}
                onClick={() => propose({ op: 'drop', column: c.name })}
              >
                Drop
              </button>
            </>
          )
        }
      />
      <ErrorBox error={error} />
      <Card>
        <AddColumn propose={propose} />
      </Card>
      <Card>
        <AddForeignKey columns={schema.columns} propose={propose} />
      </Card>
      <Card>
        <form class="inline" aria-label="Rename table" onSubmit={renameTable}>
          <h2>Rename table</h2>
          <label for="rename-table">New name</label>
          <input id="rename-table" name="newName" required />
          <button type="submit">Rename</button>
        </form>
      </Card>
      {asking && (
        <PromptDialog
          title={
            asking.what === 'name' ? `Rename column ${asking.column.name}` : `Change type of ${asking.column.name}`
          }
          label={asking.what === 'name' ? 'New name' : 'New type (one of the list or any Postgres type)'}
          initial={asking.what === 'name' ? asking.column.name : asking.column.type}
          suggestions={asking.what === 'type' ? TYPES : undefined}
          confirmLabel="Show the SQL"
          onClose={() => setAsking(null)}
          onSubmit={(v) => {
            const c = asking.column;
            setAsking(null);
            if (asking.what === 'name' && v !== c.name) propose({ op: 'rename', column: c.name, to: v });
            if (asking.what === 'type' && v !== c.type) propose({ op: 'type', column: c.name, type: v });
          }}
        />
      )}
      {pending && (
        <SqlConfirm
          title={pending.title}
          sql={pending.sql}
          onClose={() => setPending(null)}
          onDone={() => (setPending(null), pending.after ? pending.after() : onChanged())}
        />
      )}
    </div>
  );
}
