// A new table from a CSV file: its first line names the columns, the first rows suggest their
// types (editable), then the table is created (RLS on) and the file imported into it in batches.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { navigate } from '../router';
import { Dialog, ErrorBox, Field, toast, useAction } from '../ui';
import { importFile } from './csv';
import type { Column } from './table-types';
import { TYPES } from './table-create';

const AUTO = new Set(['id', 'created_at', 'updated_at']);

/** A CSV header as a column name Postgres takes unquoted: lower case, letters, digits and _. */
export function columnName(header: string): string {
  const n = header
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z_]/.test(n) ? n.slice(0, 63) : `c_${n}`.slice(0, 63);
}

/** The type the sample values of a column suggest (text unless every non-empty value fits one). */
export function guessType(values: string[]): string {
  const v = values.map((x) => x.trim()).filter(Boolean);
  const all = (re: RegExp) => v.length > 0 && v.every((x) => re.test(x));
  if (all(/^-?\d{1,15}$/)) return 'integer';
  if (all(/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i)) return 'float';
  if (all(/^(true|false)$/i)) return 'boolean';
  if (all(/^\d{4}-\d{2}-\d{2}$/)) return 'date';
  if (all(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/)) return 'datetime';
  if (
    v.length > 0 &&
    v.every(
      (x) =>
        /^[[{]/.test(x) &&
        (() => {
          try {
            JSON.parse(x);
            return true;
          } catch {
            return false;
          }
        })(),
    )
  )
    return 'json';
  return 'string';
}

interface Draft {
  header: string;
  name: string;
  type: string;
}

export function TableFromCsv({ onClose }: { onClose: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [cols, setCols] = useState<Draft[]>([]);
  const [progress, setProgress] = useState(0);
  const act = useAction();
  const pick = async (f: File | undefined) => {
    if (!f) return;
    const Papa = (await import('papaparse')).default;
    Papa.parse<Record<string, string>>(f, {
      header: true,
      preview: 50,
      skipEmptyLines: true,
      complete: (r) => {
        const headers = r.meta.fields ?? [];
        setCols(
          headers.map((h) => ({ header: h, name: columnName(h), type: guessType(r.data.map((row) => row[h] ?? '')) })),
        );
        setName(columnName(f.name.replace(/\.csv$/i, '')));
        setFile(f);
      },
    });
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act.run(async () => {
      const columns = cols
        .filter((c) => !AUTO.has(c.name))
        .map((c) => ({ name: c.name, type: c.type, nullable: true }));
      await api('/api/database/tables', { method: 'POST', body: { tableName: name, rlsEnabled: true, columns } });
      const schema = await api<{ columns: Column[] }>(`/api/database/tables/${enc(name)}/schema`);
      // The file's headers are read as the column names chosen here.
      const names = new Map(cols.map((c) => [c.header, c.name]));
      const result = await importFile(name, schema.columns, file!, setProgress, (h: string) => names.get(h) ?? h);
      toast(
        `Created ${name} and imported ${result.imported} row(s)${result.errors.length ? `; ${result.errors.length} line(s) had errors` : ''}.`,
        {
          kind: result.errors.length ? 'error' : 'success',
          detail: result.errors[0] ? `Line ${result.errors[0].line}: ${result.errors[0].message}` : undefined,
        },
      );
      navigate(`/tables/${enc(name)}`, { replace: true });
    });
  };
  return (
    <Dialog title="New table from a CSV file" onClose={onClose}>
      <form class="stack" onSubmit={create}>
        <Field id="csv-new-file" label="CSV file (first line: column names)">
          <input
            id="csv-new-file"
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => void pick(e.currentTarget.files?.[0])}
          />
        </Field>
        {file && (
          <>
            <Field id="csv-new-name" label="Table name">
              <input
                id="csv-new-name"
                value={name}
                required
                pattern="[A-Za-z_][A-Za-z0-9_]*"
                onInput={(e) => setName(e.currentTarget.value)}
              />
            </Field>
            <fieldset>
              <legend>Columns (types guessed from the first rows)</legend>
              <div class="stack">
                {cols.map((c, i) => (
                  <div key={c.header} class="inline">
                    <label for={`csv-col-${i}`}>{c.header}</label>
                    <select
                      id={`csv-col-${i}`}
                      value={c.type}
                      onChange={(e) =>
                        setCols(cols.map((x, j) => (j === i ? { ...x, type: e.currentTarget.value } : x)))
                      }
                    >
                      {TYPES.map((t) => (
                        <option key={t}>{t}</option>
                      ))}
                    </select>
                    {c.name !== c.header && <span class="muted">as {c.name}</span>}
                    {AUTO.has(c.name) && <span class="muted">(Plinth adds this column)</span>}
                  </div>
                ))}
              </div>
            </fieldset>
            <p class="muted">Row-level security is on: only the admin key reaches the rows until you add a policy.</p>
          </>
        )}
        {act.busy && <progress aria-label="Rows imported" value={progress} />}
        <ErrorBox error={act.error} />
        <div class="footer">
          <button type="button" class="ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={!file || act.busy}>
            Create table and import
          </button>
        </div>
      </form>
    </Dialog>
  );
}
