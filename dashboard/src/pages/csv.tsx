// CSV import (streamed with papaparse: a preview first, then batches, errors per line) and
// CSV / JSON export of the rows the filters select. papaparse loads only when used.
import { useState } from 'preact/hooks';
import { api, enc, request } from '../api';
import { ErrorBox, Modal, toast, useAction } from '../ui';
import { fromText } from './rowpanel';
import type { Column } from './table-types';

const BATCH = 500;
const PAGE = 1000;

function save(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Every row the query selects, a page at a time. */
async function allRows(table: string, query: string[]): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const r = await request(
      `/api/database/records/${enc(table)}?${[...query, `limit=${PAGE}`, `offset=${offset}`].join('&')}`,
    );
    const rows = (await r.json()) as Record<string, unknown>[];
    out.push(...rows);
    if (rows.length < PAGE) return out;
  }
}

export async function exportRows(table: string, query: string[], format: 'csv' | 'json') {
  const rows = await allRows(table, query);
  if (format === 'json') return save(`${table}.json`, 'application/json', JSON.stringify(rows, null, 2));
  const Papa = (await import('papaparse')).default;
  const flat = rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]),
    ),
  );
  save(`${table}.csv`, 'text/csv', Papa.unparse(flat));
}

interface Result {
  imported: number;
  errors: Array<{ line: number; message: string }>;
}

/** A CSV record → a row for the table: known columns only, typed, empty cells left out. */
function toRow(columns: Column[], rec: Record<string, string>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const c of columns) {
    const text = rec[c.name];
    if (text === undefined || text === '') continue;
    row[c.name] = c.type === 'string' ? text : fromText(c, text);
  }
  return row;
}

/** Inserts a batch; when it fails, line by line to say which lines are wrong. */
async function insert(
  table: string,
  columns: Column[],
  batch: Array<{ line: number; rec: Record<string, string> }>,
  out: Result,
) {
  const url = `/api/database/records/${enc(table)}`;
  const rows: Array<{ line: number; row: Record<string, unknown> }> = [];
  for (const b of batch) {
    try {
      rows.push({ line: b.line, row: toRow(columns, b.rec) });
    } catch (e) {
      out.errors.push({ line: b.line, message: (e as Error).message });
    }
  }
  if (!rows.length) return;
  try {
    await api(url, { method: 'POST', body: rows.map((r) => r.row) });
    out.imported += rows.length;
  } catch {
    for (const r of rows) {
      try {
        await api(url, { method: 'POST', body: [r.row] });
        out.imported++;
      } catch (e) {
        out.errors.push({ line: r.line, message: (e as Error).message });
      }
    }
  }
}

/** Imports a CSV file in batches; `header` renames the file's column names (a new table's chosen names). */
export async function importFile(
  table: string,
  columns: Column[],
  file: File,
  onProgress: (n: number) => void,
  header?: (h: string) => string,
): Promise<Result> {
  const Papa = (await import('papaparse')).default;
  const out: Result = { imported: 0, errors: [] };
  let line = 1;
  const pending: Array<{ line: number; rec: Record<string, string> }> = [];
  await new Promise<void>((resolve, reject) => {
    Papa.parse<Record<string, string>>(file, {
      header: true,
      ...(header ? { transformHeader: header } : {}),
      skipEmptyLines: true,
      chunkSize: 256 * 1024,
      chunk: (res, parser) => {
        parser.pause();
        for (const rec of res.data) pending.push({ line: ++line, rec });
        const batches: (typeof pending)[] = [];
        while (pending.length >= BATCH) batches.push(pending.splice(0, BATCH));
        void (async () => {
          for (const b of batches) await insert(table, columns, b, out);
          onProgress(out.imported);
          parser.resume();
        })().catch(reject);
      },
      complete: () => void insert(table, columns, pending, out).then(() => resolve(), reject),
      error: reject,
    });
  });
  return out;
}

/** Pick a file, see its first lines and how its columns match, then import. */
export function CsvImport(props: { table: string; columns: Column[]; onClose: () => void; onDone: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<{ fields: string[]; rows: string[][] } | null>(null);
  const [progress, setProgress] = useState(0);
  const [result, setResult] = useState<Result | null>(null);
  const act = useAction();
  const names = new Set(props.columns.map((c) => c.name));
  const pick = async (f: File | undefined) => {
    if (!f) return;
    setFile(f);
    setResult(null);
    const Papa = (await import('papaparse')).default;
    Papa.parse<string[]>(f, {
      preview: 6,
      skipEmptyLines: true,
      complete: (r) => setPreview({ fields: r.data[0] ?? [], rows: r.data.slice(1) }),
    });
  };
  const run = () =>
    act
      .run(async () => {
        const r = await importFile(props.table, props.columns, file!, setProgress);
        setResult(r);
        toast(
          `${r.imported} row(s) imported into ${props.table}${r.errors.length ? `; ${r.errors.length} line(s) with errors` : ''}.`,
          {
            kind: r.errors.length ? 'error' : 'success',
          },
        );
      })
      .then(props.onDone);
  return (
    <Modal title={`Import CSV into ${props.table}`} onClose={props.onClose}>
      <div class="stack">
        <label for="csv-file">CSV file (first line: column names)</label>
        <input
          id="csv-file"
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => void pick(e.currentTarget.files?.[0])}
        />
        {preview && (
          <>
            <p>
              Columns: {preview.fields.map((f) => (names.has(f) ? f : `${f} (not in the table: ignored)`)).join(', ')}
            </p>
            <div class="grid-wrap" tabIndex={0} role="region" aria-label="Preview">
              <table class="grid">
                <thead>
                  <tr>
                    {preview.fields.map((f) => (
                      <th key={f} scope="col">
                        {f}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.rows.map((r, i) => (
                    <tr key={i}>
                      {r.map((v, j) => (
                        <td key={j}>{v}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        {act.busy && <progress aria-label="Rows imported" value={progress} />}
        <ErrorBox error={act.error} />
        {result && (
          <div role="status">
            <p>
              {result.imported} row(s) imported, {result.errors.length} line(s) with errors.
            </p>
            <ul class="errors">
              {result.errors.slice(0, 50).map((e) => (
                <li key={e.line}>
                  Line {e.line}: {e.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        <div class="actions">
          <button type="button" class="primary" disabled={!file || act.busy} onClick={() => void run()}>
            Import
          </button>
        </div>
      </div>
    </Modal>
  );
}
