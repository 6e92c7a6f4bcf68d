// A steady mixed load against a running Plinth: reads, writes with unique ids, uploads and
// function calls, each answer recorded with its status, code and time.
import { type Answer as Reply, at, call } from '../helpers/http.js';

export interface Answer {
  kind: 'read' | 'write' | 'upload' | 'call';
  status: number; // 0: the connection failed
  code?: string;
  ms: number;
  at: number;
  /** The id of a write, the key of an upload. */
  id?: string;
}

export interface LoadTarget {
  url: string;
  adminKey: string;
  table: string;
  bucket: string;
  fn: string;
}

/** Sets up the table, bucket and function the load uses. */
export async function prepare(target: Omit<LoadTarget, 'table' | 'bucket' | 'fn'>): Promise<LoadTarget> {
  const t: LoadTarget = { ...target, table: 'fault_items', bucket: 'fault-files', fn: 'fault-echo' };
  const h = { 'x-api-key': t.adminKey };
  const steps: Array<[string, unknown]> = [
    [
      '/api/database/tables',
      { tableName: t.table, columns: [{ name: 'tag', type: 'string', nullable: false, unique: true }] },
    ],
    ['/api/storage/buckets', { bucketName: t.bucket, isPublic: false }],
    [
      '/api/functions',
      { name: t.fn, code: 'export default async (req) => Response.json({ ok: true, t: Date.now() })' },
    ],
  ];
  for (const [p, body] of steps) {
    const r = await call(at(t.url), 'POST', p, { headers: h, body });
    if (r.status >= 300) throw new Error(`setup ${p}: ${r.status} ${r.text}`);
  }
  return t;
}

let seq = 0;
async function one(t: LoadTarget, kind: Answer['kind']): Promise<Answer> {
  const start = Date.now();
  const server = at(t.url);
  const headers = { 'x-api-key': t.adminKey };
  const id = `${process.pid}-${Date.now().toString(36)}-${seq++}`;
  let r: Reply;
  try {
    const signal = AbortSignal.timeout(20_000);
    if (kind === 'read') r = await call(server, 'GET', `/api/database/records/${t.table}?limit=5`, { headers, signal });
    else if (kind === 'write')
      r = await call(server, 'POST', `/api/database/records/${t.table}`, { headers, body: [{ tag: id }], signal });
    else if (kind === 'upload') {
      const form = new FormData();
      form.append('file', new Blob([`bytes of ${id}`]), 'f.txt');
      r = await call(server, 'PUT', `/api/storage/buckets/${t.bucket}/objects/${id}.txt`, {
        headers,
        raw: form,
        signal,
      });
    } else r = await call(server, 'POST', `/functions/${t.fn}`, { headers, signal });
  } catch {
    return { kind, status: 0, ms: Date.now() - start, at: start, id };
  }
  const code = typeof r.body?.error === 'string' ? (r.body.error as string) : undefined;
  return { kind, status: r.status, code, ms: Date.now() - start, at: start, id };
}

/** Runs `workers` loops of mixed requests until stop() is called; returns every answer. */
export function runLoad(t: LoadTarget, workers = 4) {
  const answers: Answer[] = [];
  let running = true;
  const kinds: Answer['kind'][] = ['read', 'write', 'upload', 'call'];
  const loops = Array.from({ length: workers }, async (_, w) => {
    let i = w;
    while (running) {
      answers.push(await one(t, kinds[i++ % kinds.length]!));
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

/** Tally of answers by kind and status, for failure messages. */
export function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = `${a.kind} ${a.status}${a.code ? ` ${a.code}` : ''}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
