// "New table": name, columns (type, SQL default, nullable, unique, a foreign key with its on-delete
// rule) and row-level security, on by default.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Plus, Trash2 } from '../components/icons';
import { navigate } from '../router';
import { Button, ErrorBox, Modal, toast, useAction } from '../ui';

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

const blank = (): ColumnDraft => ({
  name: '',
  type: 'string',
  nullable: true,
  unique: false,
  defaultValue: '',
  fkTable: '',
  fkColumn: 'id',
  onDelete: 'NO ACTION',
});

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

function ColumnRow(props: {
  c: ColumnDraft;
  i: number;
  tables: string[];
  set: (c: ColumnDraft) => void;
  remove: () => void;
}) {
  const { c, i, set } = props;
  const id = (f: string) => `col-${i}-${f}`;
  return (
    <fieldset class="column">
      <legend>Column {i + 1}</legend>
      <label for={id('name')}>Name</label>
      <input
        id={id('name')}
        value={c.name}
        required
        pattern="[A-Za-z_][A-Za-z0-9_]*"
        onInput={(e) => set({ ...c, name: e.currentTarget.value })}
      />
      <label for={id('type')}>Type</label>
      <select id={id('type')} value={c.type} onChange={(e) => set({ ...c, type: e.currentTarget.value })}>
        {TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label for={id('default')}>Default (SQL)</label>
      <input
        id={id('default')}
        value={c.defaultValue}
        placeholder="e.g. now() or 'draft'"
        onInput={(e) => set({ ...c, defaultValue: e.currentTarget.value })}
      />
      <label class="check">
        <input
          type="checkbox"
          checked={c.nullable}
          onChange={(e) => set({ ...c, nullable: e.currentTarget.checked })}
        />{' '}
        Nullable
      </label>
      <label class="check">
        <input type="checkbox" checked={c.unique} onChange={(e) => set({ ...c, unique: e.currentTarget.checked })} />{' '}
        Unique
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
          <select
            id={id('ondelete')}
            value={c.onDelete}
            onChange={(e) => set({ ...c, onDelete: e.currentTarget.value })}
          >
            {ON_DELETE.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </>
      )}
      <Button variant="ghost danger" size="sm" icon={Trash2} onClick={props.remove}>
        Remove column {i + 1}
      </Button>
    </fieldset>
  );
}

export function CreateTable(props: { tables: string[]; onClose: () => void }) {
  const [name, setName] = useState('');
  const [rls, setRls] = useState(true);
  const [cols, setCols] = useState<ColumnDraft[]>([blank()]);
  const act = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await act.run(() =>
      api('/api/database/tables', {
        method: 'POST',
        body: { tableName: name.trim(), rlsEnabled: rls, columns: cols.map(toColumn) },
      }),
    );
    if (ok) {
      toast(`Created the table ${name.trim()}.`);
      navigate(`/tables/${enc(name.trim())}`, { replace: true });
    }
  };
  return (
    <Modal title="New table" onClose={props.onClose}>
      <form onSubmit={submit} class="stack">
        <label for="table-name">Table name</label>
        <input
          id="table-name"
          value={name}
          required
          pattern="[A-Za-z_][A-Za-z0-9_]*"
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label class="check">
          <input type="checkbox" checked={rls} onChange={(e) => setRls(e.currentTarget.checked)} /> Row-level security
          on (recommended: without it the anon key reads and writes every row)
        </label>
        <p class="muted">id (uuid), created_at and updated_at are added for you.</p>
        {cols.map((c, i) => (
          <ColumnRow
            key={i}
            c={c}
            i={i}
            tables={props.tables}
            set={(n) => setCols(cols.map((x, j) => (j === i ? n : x)))}
            remove={() => setCols(cols.filter((_, j) => j !== i))}
          />
        ))}
        <div>
          <Button size="sm" icon={Plus} onClick={() => setCols([...cols, blank()])}>
            Add column
          </Button>
        </div>
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={act.busy}>
            Create table
          </button>
        </div>
      </form>
    </Modal>
  );
}
