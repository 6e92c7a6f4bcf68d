import { useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { ErrorBox, cellText, useAction } from '../ui';
import { useEditor } from '../useEditor';

function template(): string {
  const table = new URLSearchParams(location.search).get('table');
  if (!table) return 'select now();\n';
  return `-- Owners see and change only their own rows (RLS must be on for ${table}).
create policy ${table}_owner on public.${table}
  for all to authenticated
  using (owner = auth.uid())
  with check (owner = auth.uid());
`;
}

/** Results of a statement as a grid: columns from the rows' keys. */
export function ResultGrid({ rows }: { rows: Record<string, unknown>[] }) {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (!rows.length) return null;
  return (
    <div class="grid-wrap" tabIndex={0} role="region" aria-label="Results">
      <table class="grid">
        <thead>
          <tr>
            {cols.map((c) => (
              <th key={c} scope="col">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {cols.map((c) => (
                <td key={c} class={r[c] === null ? 'null' : undefined}>{cellText(r[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The admin SQL editor: one statement (or a script), results as a grid, errors with position. */
export function Sql() {
  const act = useAction();
  const [result, setResult] = useState<{ rows: Record<string, unknown>[]; rowCount: number } | null>(null);
  const run = async () => {
    const query = editor?.value() ?? '';
    setResult(null);
    const ok = await act.run(async () => setResult(await api('/api/database/sql', { method: 'POST', body: { query } })));
    if (!ok) return;
  };
  const { ref, editor } = useEditor({ doc: template(), lang: 'sql', label: 'SQL statement', onRun: () => void run() });
  const err = act.error;
  return (
    <section class="stack">
      <h1>SQL editor</h1>
      <p class="muted">Runs as the database owner in one transaction. Ctrl+Enter runs.</p>
      <div ref={ref} class="editor" />
      <div class="row">
        <button type="button" class="primary" disabled={act.busy || !editor} onClick={() => void run()}>
          Run
        </button>
        {err instanceof ApiError && err.position && (
          <button type="button" class="ghost" onClick={() => editor?.goTo(err.position!.line, err.position!.column)}>
            Go to line {err.position.line}, column {err.position.column}
          </button>
        )}
      </div>
      <ErrorBox error={err} />
      {result && (
        <p role="status">
          {result.rowCount} row{result.rowCount === 1 ? '' : 's'}
        </p>
      )}
      {result && <ResultGrid rows={result.rows} />}
    </section>
  );
}
