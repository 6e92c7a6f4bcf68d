import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Db } from '../db/types.js';
import type { FunctionService } from '../functions/service.js';
import { outboundFetch, type OutboundPolicy } from '../lib/outbound.js';
import type { Schedule } from './store.js';

/** How much of an answer or error a run keeps. */
export const OUTPUT_BYTES = 2048;
const SECRET_REF = /\$\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]{0,127})\s*\}\}/g;

export interface TargetDeps {
  /** Plinth's own connection: the secrets that headers name. */
  db: Db;
  /** The owner role's pool (src/db/owner.ts): a SQL target runs there, as admin SQL does. */
  ownerDb: Db;
  functions: FunctionService;
  policy: OutboundPolicy;
  dispatcher: Dispatcher;
  publicUrl: string | null;
}

export interface TargetResult {
  ok: boolean;
  output: string;
}

/** Replaces `${{secrets.NAME}}` in header values by the secret's value; an unknown name is an error. */
export async function resolveSecrets(db: Db, headers: Record<string, string>): Promise<Record<string, string>> {
  const names = new Set<string>();
  for (const v of Object.values(headers)) for (const m of v.matchAll(SECRET_REF)) names.add(m[1]!);
  if (!names.size) return headers;
  const { rows } = await db.query<{ name: string; value: string }>(
    'select name, value from functions.secrets where name = any($1)',
    [[...names]],
  );
  const values = new Map(rows.map((r) => [r.name, r.value]));
  const missing = [...names].filter((n) => !values.has(n));
  if (missing.length) throw new Error(`Unknown secret ${missing.join(', ')}; create it with PUT /api/secrets/{name}.`);
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, v.replace(SECRET_REF, (_, n: string) => values.get(n)!)]),
  );
}

async function readBody(body: Readable | Buffer, max: number): Promise<string> {
  if (Buffer.isBuffer(body)) return body.subarray(0, max).toString('utf8');
  let text = '';
  for await (const chunk of body) {
    text += Buffer.from(chunk as Buffer).toString('utf8');
    if (text.length >= max) {
      body.destroy();
      break;
    }
  }
  return text.slice(0, max);
}

/** The text of an error a run records: the database's own message, not the API's envelope. */
export function errorText(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  const e = cause instanceof Error && (cause as { code?: unknown }).code ? cause : err;
  return String((e as Error)?.message ?? e).slice(0, OUTPUT_BYTES);
}

function bodyText(body: unknown): string | null {
  if (body === null || body === undefined) return null;
  return typeof body === 'string' ? body : JSON.stringify(body);
}

/** Runs the schedule's target once, within `signal`; a non-2xx answer is a failure with its first bytes. */
export async function runTarget(
  deps: TargetDeps,
  s: Schedule,
  run: { id: string; dueAt: string },
  signal: AbortSignal,
): Promise<TargetResult> {
  const timeoutMs = s.timeoutSeconds * 1000;
  if (s.sql !== null) {
    const statement = s.sql;
    // As the owner role, like admin SQL, bounded like the run: Postgres cancels it when its time is up.
    const r = await deps.ownerDb.transaction(async (tx) => {
      await tx.query(`select set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
      return tx.query(statement);
    });
    return {
      ok: true,
      output: JSON.stringify({ rowCount: r.rowCount, rows: r.rows.slice(0, 20) }).slice(0, OUTPUT_BYTES),
    };
  }
  if (s.functionSlug) {
    const text = bodyText(s.body);
    const res = await Promise.race([
      deps.functions.invoke(s.functionSlug, {
        method: s.httpMethod === 'GET' ? 'GET' : 'POST',
        url: `${deps.publicUrl ?? 'http://localhost'}/functions/${s.functionSlug}`,
        headers: {
          'content-type': 'application/json',
          ...s.headers,
          'x-plinth-role': 'admin',
          'x-plinth-schedule-id': s.id,
          'x-plinth-run-id': run.id,
          'x-plinth-due-at': run.dueAt,
        },
        body: text === null || s.httpMethod === 'GET' ? null : Readable.from([Buffer.from(text)]),
      }),
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error(`timed out after ${s.timeoutSeconds} s`)), {
          once: true,
        }),
      ),
    ]);
    const out = await readBody(res.body, OUTPUT_BYTES);
    return { ok: res.status < 400, output: `${res.status} ${out}`.slice(0, OUTPUT_BYTES) };
  }
  // The run's id and due time let a receiver drop a repeat (a retried run).
  const headers = await resolveSecrets(deps.db, {
    'content-type': 'application/json',
    'user-agent': 'Plinth-Scheduler',
    ...s.headers,
    'x-plinth-schedule-id': s.id,
    'x-plinth-run-id': run.id,
    'x-plinth-due-at': run.dueAt,
  });
  const res = await outboundFetch(
    s.functionUrl!,
    {
      method: s.httpMethod,
      headers,
      body: s.httpMethod === 'GET' ? null : bodyText(s.body),
      timeoutMs,
      maxBodyBytes: OUTPUT_BYTES,
    },
    deps.policy,
    deps.dispatcher,
  );
  return { ok: res.status < 400, output: `${res.status} ${res.body}`.slice(0, OUTPUT_BYTES) };
}
