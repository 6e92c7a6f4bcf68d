// The side-panel row editor: one typed input per column (JSON, date, boolean, enum, number),
// and a picker that searches the table a foreign key references.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc } from '../api';
import { literal, runSql } from '../lib/sql';
import { Icon, X } from '../components/icons';
import { fromText, inputType, toText } from '../lib/values';
import { ErrorBox, toast, useAction, useLoad } from '../ui';
import { searchReferenced } from './cell';
import type { Column } from './table-types';

const AUTO = new Set(['id', 'created_at', 'updated_at']);
const KNOWN = new Set(['string', 'integer', 'float', 'boolean', 'uuid', 'datetime', 'date', 'json']);

/** Labels of the enum types among the columns' types (one SQL round trip). */
export function useEnums(columns: Column[]) {
  const names = [...new Set(columns.map((c) => c.type).filter((t) => !KNOWN.has(t)))];
  const { data } = useLoad(async () => {
    if (!names.length) return {};
    const r = await runSql<{ t: string; labels: string[] }>(
      `select t.typname::text as t, array_agg(e.enumlabel::text order by e.enumsortorder) as labels from pg_enum e join pg_type t on t.oid = e.enumtypid where t.typname in (${names.map(literal).join(', ')}) group by t.typname`,
    );
    return Object.fromEntries(r.rows.map((x) => [x.t, x.labels])) as Record<string, string[]>;
  }, [names.join()]);
  return data ?? {};
}

export { fromText } from '../lib/values';

/** Searches the referenced table by its first text column (or its key) and picks a row. */
function FkPicker({ col, value, onPick }: { col: Column; value: string; onPick: (v: string) => void }) {
  const fk = col.foreignKey!;
  const [term, setTerm] = useState('');
  const { data, error } = useLoad(() => searchReferenced(fk, term), [term]);
  return (
    <div class="fk">
      <label for={`fk-search-${col.name}`}>Search {fk.table}</label>
      <input id={`fk-search-${col.name}`} type="search" value={term} onInput={(e) => setTerm(e.currentTarget.value)} />
      <ErrorBox error={error} />
      <ul class="picks" aria-label={`Rows of ${fk.table}`}>
        {data?.map((r) => (
          <li key={r.key}>
            <button
              type="button"
              class={r.key === value ? 'chip on' : 'chip'}
              aria-pressed={r.key === value}
              onClick={() => onPick(r.key)}
            >
              {r.label ? `${r.label} · ` : ''}
              <code>{r.key.slice(0, 8)}</code>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Field({
  c,
  id,
  value,
  set,
  enums,
}: {
  c: Column;
  id: string;
  value: string;
  set: (v: string) => void;
  enums: Record<string, string[]>;
}) {
  const onInput = (e: Event) => set((e.currentTarget as HTMLInputElement).value);
  const labels = enums[c.type];
  if (c.type === 'boolean' || labels)
    return (
      <select id={id} value={value} onChange={onInput}>
        <option value="">{c.nullable ? 'NULL' : 'choose'}</option>
        {(labels ?? ['true', 'false']).map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    );
  if (c.type === 'json')
    return <textarea id={id} class="mono" rows={5} value={value} onInput={onInput} spellcheck={false} />;
  const type = inputType(c.type);
  return (
    <input
      id={id}
      type={type as 'text'}
      step={type === 'datetime-local' ? 1 : 'any'}
      value={value}
      placeholder={c.default ?? ''}
      onInput={onInput}
    />
  );
}

/** Inserts (row null) or edits a row in a panel at the side of the page. */
export function RowPanel(props: {
  table: string;
  columns: Column[];
  pk: string;
  row: Record<string, unknown> | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const { row, columns } = props;
  const cols = row ? columns.filter((c) => !c.isPrimaryKey) : columns.filter((c) => !AUTO.has(c.name));
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(cols.map((c) => [c.name, row ? toText(c, row[c.name]) : ''])),
  );
  const enums = useEnums(columns);
  const act = useAction();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => ref.current?.showModal(), []);
  const prefix = row ? 'edit' : 'ins';
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await act.run(async () => {
      const body: Record<string, unknown> = {};
      for (const c of cols) {
        const text = values[c.name] ?? '';
        if (row && text === toText(c, row[c.name])) continue;
        if (!row && text === '' && c.type !== 'string') continue;
        body[c.name] = c.type === 'string' && text !== 'NULL' ? text : fromText(c, text);
      }
      if (row)
        await api(`/api/database/records/${enc(props.table)}?${enc(props.pk)}=eq.${enc(String(row[props.pk]))}`, {
          method: 'PATCH',
          body,
        });
      else await api(`/api/database/records/${enc(props.table)}`, { method: 'POST', body: [body] });
    });
    if (ok) {
      toast(row ? `Saved row ${String(row[props.pk])}.` : `Inserted a row into ${props.table}.`);
      props.onDone();
    }
  };
  return (
    <dialog
      ref={ref}
      class="side"
      aria-label={row ? 'Edit row' : 'Insert row'}
      onClose={props.onClose}
      onCancel={props.onClose}
    >
      <header class="row">
        <h2>{row ? `Edit row ${String(row[props.pk])}` : 'Insert row'}</h2>
        <button type="button" class="ghost icon-only sm" aria-label="Close" title="Close" onClick={props.onClose}>
          <Icon icon={X} />
        </button>
      </header>
      <form class="stack" onSubmit={submit}>
        {cols.map((c) => (
          <div key={c.name} class="field">
            <label for={`${prefix}-${c.name}`}>
              {c.name}{' '}
              <span class="muted">
                {c.type}
                {c.nullable ? '' : ', required'}
              </span>
            </label>
            <Field
              c={c}
              id={`${prefix}-${c.name}`}
              value={values[c.name] ?? ''}
              enums={enums}
              set={(v) => setValues({ ...values, [c.name]: v })}
            />
            {c.foreignKey && (
              <FkPicker col={c} value={values[c.name] ?? ''} onPick={(v) => setValues({ ...values, [c.name]: v })} />
            )}
          </div>
        ))}
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={act.busy}>
            {row ? 'Save row' : 'Insert'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
