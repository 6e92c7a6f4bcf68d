import { AppError } from '../errors/index.js';
import type { Identity } from '../auth/identity.js';
import type { Db, Queryable } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';
import { withCaller } from './caller.js';
import { isIdent, safe } from './ident.js';
import { parseRecordsQuery, type RecordsQuery } from './query.js';
import { buildDelete, buildInsert, buildSelect, buildUpdate, type Statement } from './build.js';
import type { SchemaCache, TableMeta } from './schema.js';
import { callFunction } from './rpc.js';

export type Operation = 'select' | 'insert' | 'update' | 'delete' | 'rpc';

/** A page of records as JSON text built by Postgres, with the total of matching rows. */
export interface Page {
  body: string;
  total: number;
  offset: number;
  /** Rows in this page. */
  count: number;
}

export interface WriteOptions {
  /** `Prefer: return=representation`: answer with the written rows. */
  representation: boolean;
}

/** The records API over the tables of schema public, run as the caller (RLS applies). */
export class RecordsService {
  constructor(
    private readonly db: Db,
    readonly schema: SchemaCache,
  ) {}

  /** The table by its client-given name; only schema public is ever looked at. */
  async table(name: string): Promise<TableMeta> {
    const t = isIdent(name) ? await this.schema.get(name) : null;
    if (!t) throw new AppError('TABLE_NOT_FOUND', { message: `No table "${safe(name)}".` });
    return t;
  }

  /** Builds a statement; an unknown column reloads the schema once (another instance may have added it). */
  private async build(name: string, make: (t: TableMeta) => Statement): Promise<Statement> {
    const t = await this.table(name);
    try {
      return make(t);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'UNKNOWN_COLUMN') || !(await this.schema.reloadOnMiss())) throw err;
      return make(await this.table(name));
    }
  }

  private async run(identity: Identity, op: Operation, stmt: Statement): Promise<{ rows: Record<string, unknown>[]; rowCount: number }> {
    return this.as(identity, op, (tx) => tx.query(stmt.text, stmt.values));
  }

  /** Runs `fn` as the caller and translates database errors for operation `op`. */
  async as<T>(identity: Identity, op: Operation, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await withCaller(this.db, identity, fn);
    } catch (err) {
      throw this.translate(err, op);
    }
  }

  /** Refines database errors by SQLSTATE and operation. */
  private translate(err: unknown, op: Operation): unknown {
    const info = pgErrorInfo(err instanceof AppError ? err.cause : err);
    if (!info) return err;
    // 23001: an ON DELETE RESTRICT reference; 23503 on delete: a NO ACTION reference.
    if (info.code === '23001' || (info.code === '23503' && op === 'delete')) {
      return new AppError('STILL_REFERENCED', {
        message: `The row is still referenced${info.constraint ? ` (constraint "${info.constraint}")` : ''}.`,
        cause: err,
      });
    }
    if (err instanceof AppError) return err;
    // The schema changed under this instance: forget it so the next request sees the new one.
    if (info.code === '42P01') {
      this.schema.invalidate();
      return new AppError('TABLE_NOT_FOUND', { cause: err });
    }
    if (info.code === '42703') {
      this.schema.invalidate();
      return new AppError('UNKNOWN_COLUMN', { message: 'A column of the request does not exist.', cause: err });
    }
    // RAISE EXCEPTION in a function or trigger: its message was written for the client.
    if (info.code === 'P0001') {
      const text = err instanceof Error ? err.message : '';
      return new AppError('INVALID_INPUT', { message: `The database function raised: ${safe(text, 300)}`, cause: err });
    }
    if (info.code === '54001') return new AppError('INVALID_QUERY', { message: 'The query is too complex.', cause: err });
    // 0A000/55000: e.g. writing to a view that cannot be written to.
    if (info.code.startsWith('0A') || info.code.startsWith('55')) {
      return new AppError('INVALID_QUERY', { message: 'This table or view does not allow this operation.', cause: err });
    }
    // Other class-42 errors of a records statement come from what the request asked for
    // (an operator that does not fit a type, an ambiguous function call, ...).
    if (info.code.startsWith('42')) {
      return new AppError('INVALID_QUERY', { message: 'The request does not fit the table or function (types, operators or arguments).', cause: err });
    }
    return err;
  }

  /** GET: rows matching the query string, with the total. `range` (short path) overrides limit/offset. */
  async select(identity: Identity, name: string, rawQuery: string, range?: { offset: number; limit: number }): Promise<Page> {
    const q = parseRecordsQuery(rawQuery);
    if (range) {
      q.offset = range.offset;
      q.limit = range.limit;
    }
    const stmt = await this.build(name, (t) => buildSelect(t, q));
    const { rows } = await this.run(identity, 'select', stmt);
    const row = rows[0] as { body: string; total: number | string };
    const total = Number(row.total);
    const offset = q.offset ?? 0;
    const limit = q.limit ?? 100;
    return { body: row.body, total, offset, count: Math.max(0, Math.min(limit, total - offset)) };
  }

  /** POST: inserts records (or upserts with `onConflict`). Returns JSON text with representation. */
  async insert(
    identity: Identity,
    name: string,
    rows: Array<Record<string, unknown>>,
    rawQuery: string,
    opts: WriteOptions & { resolution: 'merge' | 'ignore' | null },
  ): Promise<string | null> {
    const q = parseRecordsQuery(rawQuery);
    assertOnly(q, ['select', 'onConflict']);
    const stmt = await this.build(name, (t) => {
      const onConflict = q.onConflict ?? (opts.resolution ? t.primaryKey : null);
      if (opts.resolution && !onConflict?.length) {
        throw new AppError('INVALID_QUERY', { message: `Table "${t.name}" has no primary key: give on_conflict=<columns>.` });
      }
      return buildInsert(t, rows, {
        representation: opts.representation,
        select: q.select,
        // on_conflict alone is a plain insert (a conflict is a 409), as in PostgREST: only
        // `Prefer: resolution=…` makes it an upsert.
        upsert: opts.resolution && onConflict ? { onConflict, resolution: opts.resolution } : null,
      });
    });
    const r = await this.run(identity, 'insert', stmt);
    return opts.representation ? (r.rows[0] as { body: string }).body : null;
  }

  /** PATCH: updates the rows matching the filters (at least one filter). */
  async update(identity: Identity, name: string, rawQuery: string, patch: Record<string, unknown>, opts: WriteOptions): Promise<string | null> {
    const q = parseRecordsQuery(rawQuery);
    const stmt = await this.build(name, (t) => buildUpdate(t, q, patch, opts.representation));
    const r = await this.run(identity, 'update', stmt);
    return opts.representation ? (r.rows[0] as { body: string }).body : null;
  }

  /** DELETE: deletes the rows matching the filters (at least one filter). */
  async delete(identity: Identity, name: string, rawQuery: string, opts: WriteOptions): Promise<string | null> {
    const q = parseRecordsQuery(rawQuery);
    const stmt = await this.build(name, (t) => buildDelete(t, q, opts.representation));
    const r = await this.run(identity, 'delete', stmt);
    return opts.representation ? (r.rows[0] as { body: string }).body : null;
  }

  /** RPC: calls public.<fn> with named arguments as the caller; the result as JSON text. */
  rpc(identity: Identity, fn: string, args: Record<string, unknown>): Promise<string> {
    return this.as(identity, 'rpc', (tx) => callFunction(tx, fn, args));
  }
}

function assertOnly(q: RecordsQuery, allowed: Array<'select' | 'onConflict'>): void {
  if (q.filters.length || q.limit !== null || q.offset !== null || q.order.length) {
    throw new AppError('INVALID_QUERY', { message: `Inserting takes only ${allowed.map((a) => (a === 'onConflict' ? 'on_conflict' : a)).join(' and ')} in the query string.` });
  }
  if (!allowed.includes('select') && q.select) throw new AppError('INVALID_QUERY', { message: 'select is not allowed here.' });
}

/** Parses a Prefer header into its options (PostgREST names). */
export function parsePrefer(header: string | string[] | undefined): { representation: boolean; resolution: 'merge' | 'ignore' | null } {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const parts = text.split(',').map((s) => s.trim().toLowerCase());
  return {
    representation: parts.includes('return=representation'),
    resolution: parts.includes('resolution=merge-duplicates') ? 'merge' : parts.includes('resolution=ignore-duplicates') ? 'ignore' : null,
  };
}

/** Parses a `Range: start-end` header (optionally `items=start-end`) into offset and limit. */
export function parseRange(header: string | undefined, maxLimit = 1000): { offset: number; limit: number } | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const m = /^\s*(?:items=)?(\d{1,10})-(\d{0,10})\s*$/.exec(header);
  if (!m) throw new AppError('INVALID_QUERY', { message: 'The Range header must look like "0-9".' });
  const start = Number(m[1]);
  const end = m[2] === '' ? start + maxLimit - 1 : Number(m[2]);
  if (end < start) throw new AppError('INVALID_QUERY', { message: 'The Range header ends before it starts.' });
  return { offset: start, limit: Math.min(end - start + 1, maxLimit) };
}

/** `start-end/total` (or `*\/total` for an empty page). */
export function contentRange(page: Page): string {
  return page.count > 0 ? `${page.offset}-${page.offset + page.count - 1}/${page.total}` : `*/${page.total}`;
}
