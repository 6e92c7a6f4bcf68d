// The admin SQL editor: schema-aware completion, a schema browser, history and saved queries
// (this browser's localStorage), results in the grid with export, and an explain view.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { Grid } from '../grid/grid';
import { runSql } from '../lib/sql';
import { SquareTerminal } from '../components/icons';
import { cellText, EmptyState, ErrorBox, PageHeader, SkeletonLines, useAction, useLoad } from '../ui';
import { useEditor } from '../useEditor';
import type { SqlSchema } from '../editor';
import { Library, remember } from './sql-library';

function template(): string {
  const table = new URLSearchParams(location.search).get('table');
  if (!table) return 'select now();\n';
  return `-- Owners see and change only their own rows (RLS must be on for ${table}).
create policy ${table}_owner on public.${table}
  for all to authenticated
  using (owner = (select auth.uid()))
  with check (owner = (select auth.uid()));
`;
}

const BUILTINS = [
  'now',
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'coalesce',
  'gen_random_uuid',
  'jsonb_build_object',
  'jsonb_agg',
  'array_agg',
  'lower',
  'upper',
  'length',
  'date_trunc',
  'to_char',
  'auth.uid',
  'auth.jwt',
];

async function loadSchema(): Promise<SqlSchema> {
  const [cols, fns] = await Promise.all([
    runSql<{ t: string; cols: string[] }>(
      `select table_name::text as t, array_agg(column_name::text order by ordinal_position) as cols from information_schema.columns where table_schema = 'public' group by table_name order by table_name`,
    ),
    runSql<{ f: string }>(
      `select distinct p.proname::text as f from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public' order by 1 limit 500`,
    ),
  ]);
  return {
    tables: Object.fromEntries(cols.rows.map((r) => [r.t, r.cols])),
    functions: [...BUILTINS, ...fns.rows.map((r) => r.f)],
  };
}

function download(name: string, type: string, text: string) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

async function exportCsv(rows: Record<string, unknown>[]) {
  const Papa = (await import('papaparse')).default;
  download(
    'result.csv',
    'text/csv',
    Papa.unparse(
      rows.map((r) =>
        Object.fromEntries(
          Object.entries(r).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]),
        ),
      ),
    ),
  );
}

/** Results of a statement in the grid: columns from the rows' keys. */
export function ResultGrid({ rows, label = 'Results' }: { rows: Record<string, unknown>[]; label?: string }) {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (!rows.length) return null;
  return (
    <Grid<Record<string, unknown>>
      label={label}
      rows={rows}
      rowKey={(_, i) => String(i)}
      columns={cols.map((c) => ({
        key: c,
        label: c,
        cell: (r) => cellText(r[c]),
        cellClass: (r) => (r[c] === null ? 'null' : undefined),
      }))}
    />
  );
}

function SchemaBrowser({ schema, onPick }: { schema: SqlSchema | null; onPick: (s: string) => void }) {
  return (
    <aside aria-label="Schema">
      <h2>Schema</h2>
      {!schema && <SkeletonLines lines={5} label="Loading the schema" />}
      <ul class="tree">
        {Object.entries(schema?.tables ?? {}).map(([t, cols]) => (
          <li key={t}>
            <details>
              <summary>{t}</summary>
              <ul class="tree">
                <li>
                  <button
                    type="button"
                    class="link"
                    onClick={() => onPick(`public.${t}`)}
                    aria-label={`Insert public.${t}`}
                  >
                    public.{t}
                  </button>
                </li>
                {cols.map((c) => (
                  <li key={c}>
                    <button type="button" class="link" onClick={() => onPick(c)} aria-label={`Insert column ${t}.${c}`}>
                      {c}
                    </button>
                  </li>
                ))}
              </ul>
            </details>
          </li>
        ))}
      </ul>
    </aside>
  );
}

export function Sql() {
  const act = useAction();
  const [result, setResult] = useState<{ rows: Record<string, unknown>[]; rowCount: number } | null>(null);
  const [plan, setPlan] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const schema = useLoad(loadSchema, [tick]);
  const run = async (explain = false) => {
    const query = editor?.value() ?? '';
    setResult(null);
    setPlan(null);
    remember(query);
    await act.run(async () => {
      if (!explain) return setResult(await api('/api/database/sql', { method: 'POST', body: { query } }));
      const r = await runSql<{ 'QUERY PLAN': string }>(`explain ${query.trim().replace(/;\s*$/, '')}`);
      setPlan(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
    });
    if (/^\s*(create|alter|drop)\b/i.test(query)) setTick((t) => t + 1);
  };
  const { ref, editor } = useEditor({ doc: template(), lang: 'sql', label: 'SQL statement', onRun: () => void run() });
  useEffect(() => {
    if (editor && schema.data) editor.setSchema(schema.data);
  }, [editor, schema.data]);
  const err = act.error;
  return (
    <section class="stack">
      <PageHeader
        title="SQL editor"
        description={
          <>
            Runs as the database owner in one transaction. <kbd>Ctrl</kbd> <kbd>Enter</kbd> runs; <kbd>Tab</kbd> accepts
            a completion.
          </>
        }
      />
      <div class="split">
        <SchemaBrowser schema={schema.data} onPick={(s) => editor?.insert(s)} />
        <div class="stack">
          <div ref={ref} class="editor" />
          <div class="row">
            <button type="button" class="primary" disabled={act.busy || !editor} onClick={() => void run()}>
              Run
            </button>
            <button type="button" disabled={act.busy || !editor} onClick={() => void run(true)}>
              Explain
            </button>
            {err instanceof ApiError && err.position && (
              <button
                type="button"
                class="ghost"
                onClick={() => editor?.goTo(err.position!.line, err.position!.column)}
              >
                Go to line {err.position.line}, column {err.position.column}
              </button>
            )}
          </div>
          <Library current={() => editor?.value() ?? ''} onOpen={(q) => editor?.set(q)} />
        </div>
      </div>
      <ErrorBox error={err} />
      {plan !== null && (
        <pre class="snippet" aria-label="Query plan" tabIndex={0}>
          {plan}
        </pre>
      )}
      {result && (
        <div class="row">
          <p role="status">
            {result.rowCount} row{result.rowCount === 1 ? '' : 's'}
          </p>
          {result.rows.length > 0 && (
            <>
              <button type="button" onClick={() => void exportCsv(result.rows)}>
                Export CSV
              </button>
              <button
                type="button"
                onClick={() => download('result.json', 'application/json', JSON.stringify(result.rows, null, 2))}
              >
                Export JSON
              </button>
            </>
          )}
        </div>
      )}
      {result && <ResultGrid rows={result.rows} />}
      {!result && plan === null && !err && !act.busy && (
        <EmptyState icon={SquareTerminal} title="Results appear here">
          Write a statement and press Run: rows show in a grid you can export, a change says how many rows it touched.
        </EmptyState>
      )}
    </section>
  );
}
