import { AppError } from '../errors/index.js';
import type { Identity } from '../auth/identity.js';
import { shaped, type Db, type Queryable } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';
import { withCaller } from './caller.js';
import { isName } from './ident.js';
import { parseRecordsQuery, type RecordsQuery } from './query.js';
import { buildDelete, buildInsert, buildSelect, buildUpdate, type Statement } from './build.js';
import type { Params } from './filters.js';
import { ReadCache, readStatement, type ReadPlan } from './read-cache.js';
import { newContext, type CompileContext, type ReadCount } from './compile.js';
import { pageOf, singleObject, type Page } from './page.js';
import { checkMaxAffected, commitsBehind } from './write-checks.js';
import { Scopes } from './scopes.js';
import { explainRlsRefusal, isRlsRefusal } from './policy.js';
import type { SchemaCache, TableMeta } from './schema.js';
import { csvJsonCells, type BodyFormat } from './media.js';
import { type Operation, tableNotFound, translate } from './records-errors.js';
import { callFunction, lookupFunctions, type FunctionRow, type RpcRequest, type RpcResult } from './rpc.js';

export type { Operation } from './records-errors.js';
/** A page of records as JSON text built by Postgres, with the total of matching rows. */
export type { Page } from './page.js';

export interface ReadOptions {
  range?: { offset: number; limit: number };
  /** `Accept: application/vnd.pgrst.object+json`: exactly one row, sent as an object. */
  single?: boolean;
  /** The body's format (Accept): JSON, CSV, JSON without nulls, GeoJSON (needs PostGIS). */
  format?: BodyFormat;
  /** The exposed schema (Accept-Profile); default public. */
  schema?: string;
  /** `Prefer: count=planned|estimated`: the planner's estimate (docs/database.md); `none`: no total (`/api/db` without `Prefer: count`). Default exact. */
  count?: ReadCount | null;
}

export interface WriteOptions {
  /** `Prefer: return=representation`: answer with the written rows. */
  representation: boolean;
  /** Exactly one row must be written (else 406 and nothing is written); the body is that object. */
  single?: boolean;
  /** `Prefer: tx=rollback`: answer as if written, then roll back. */
  rollback?: boolean;
  /** `Prefer: handling=strict, max-affected=N` (update, delete, RPC): more rows is PGRST124, rolled back. */
  maxAffected?: number | null;
  /** The exposed schema (Content-Profile); default public. */
  schema?: string;
}

export interface InsertWriteOptions extends WriteOptions {
  resolution: 'merge' | 'ignore' | null;
  missingDefault?: boolean;
  /** The rows came from a text/csv body: json/jsonb cells are JSON text. */
  csv?: boolean;
}

/** What a write answers: the rows as JSON text (with representation) and how many were written. */
export interface WriteResult {
  body: string | null;
  count: number;
  /** An upsert: how many of the rows were inserted (none: PostgREST answers 200, not 201). */
  inserted?: number;
}

/** The records API over the tables of schema public, run as the caller (RLS applies). */
export class RecordsService {
  readonly scopes: Scopes;
  private readonly fnCache = new Map<string, { version: string; rows: FunctionRow[] }>();
  /** Compiled reads by shape (src/database/read-cache.ts). */
  readonly reads = new ReadCache();

  constructor(
    private readonly db: Db,
    readonly schema: SchemaCache,
    /** `DB_SCHEMAS`: the schemas Accept-Profile / Content-Profile may name; the first is the default. */
    readonly exposedSchemas: readonly string[] = ['public'],
  ) {
    this.scopes = new Scopes(db, schema, exposedSchemas);
  }

  /** The table by its client-given name, in an exposed schema (default public). */
  async table(name: string, schemaName = 'public'): Promise<TableMeta> {
    const t = isName(name) ? await this.scopes.get(schemaName).schema.get(name) : null;
    if (!t) throw tableNotFound(schemaName, name);
    return t;
  }

  /** Builds a statement; an unknown column reloads the schema once (another instance may have added it). */
  private async build(
    name: string,
    make: (t: TableMeta, ctx: CompileContext) => Statement,
    schemaName = 'public',
    p?: Params,
  ): Promise<Statement> {
    const scope = this.scopes.get(schemaName);
    const attempt = async () => {
      const t = await this.table(name, schemaName);
      return make(t, newContext(await scope.schema.all(), await scope.relations.foreignKeys(), p, schemaName));
    };
    try {
      return await attempt();
    } catch (err) {
      const miss =
        err instanceof AppError &&
        (err.code === 'UNKNOWN_COLUMN' || err.code === 'RELATION_NOT_FOUND' || err.code === 'TABLE_NOT_FOUND');
      if (!miss || !(await scope.schema.reloadOnMiss())) throw err;
      return attempt();
    }
  }

  /** Runs `fn` as the caller and translates database errors for operation `op`. */
  async as<T>(identity: Identity, op: Operation, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await withCaller(this.db, identity, fn, { pipeline: true });
    } catch (err) {
      throw translate(err, op, () => this.schema.invalidate());
    }
  }

  /** GET: rows matching the query string, with the total. `range` (the Range header) overrides limit/offset. */
  async select(identity: Identity, name: string, rawQuery: string, opts: ReadOptions = {}): Promise<Page> {
    const schema = this.scopes.get(opts.schema).schema;
    const plan = await readStatement(this.reads, schema, name, rawQuery, opts, (q, p) =>
      this.build(name, (t, ctx) => buildSelect(t, q, 100, ctx, opts.format, opts.count ?? undefined), opts.schema, p),
    );
    return this.run(identity, plan, opts);
  }

  /** Runs a read whose statement is ready (`select`'s, or read-cache.ts `cachedRead`'s for the front lane). */
  async run(identity: Identity, { read: stmt, prepared, offset, limit }: ReadPlan, opts: ReadOptions): Promise<Page> {
    if (opts.format === 'geojson') await this.requirePostgis();
    const page = await this.as(identity, 'select', async (tx) => {
      const { rows } = await tx.query<{ body: string; total: number | string | null; rows?: number | string }>(
        prepared,
        stmt.values,
        { last: !stmt.estimate }, // the commit goes behind it, unless pageOf asks the planner after it
      );
      return pageOf(tx, stmt, rows[0]!, offset, limit);
    });
    return opts.single ? { ...page, body: singleObject(page.body, page.count) } : page;
  }

  /**
   * The execution plan of a read (`Accept: application/vnd.pgrst.plan`), for admins only:
   * a plan shows table sizes and costs that RLS would hide, so anon and users get 406. Run in
   * a transaction that is rolled back (`analyze` executes the statement).
   */
  async plan(
    identity: Identity,
    name: string,
    rawQuery: string,
    plan: { as: 'json' | 'text'; options: string[] },
    opts: ReadOptions = {},
  ): Promise<string> {
    if (identity.kind !== 'admin') {
      throw new AppError('MEDIA_NOT_AVAILABLE', {
        message: 'The execution plan (application/vnd.pgrst.plan) is for admin callers only.',
        pgrstCode: 'PGRST107',
      });
    }
    const q = parseRecordsQuery(rawQuery);
    if (opts.range) Object.assign(q, { offset: opts.range.offset, limit: opts.range.limit });
    const stmt = await this.build(name, (t, ctx) => buildSelect(t, q, 100, ctx, opts.format), opts.schema);
    const options = [`format ${plan.as}`, ...plan.options.filter((o) => PLAN_OPTIONS.includes(o))].join(', ');
    let out = '';
    try {
      await this.as(identity, 'select', async (tx) => {
        const { rows } = await tx.query<{ 'QUERY PLAN': unknown }>(`explain (${options}) ${stmt.text}`, stmt.values);
        const cells = rows.map((r) => r['QUERY PLAN']);
        out =
          plan.as === 'json' ? (typeof cells[0] === 'string' ? cells[0] : JSON.stringify(cells[0])) : cells.join('\n');
        throw ROLLBACK;
      });
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
    return out;
  }

  /** GeoJSON is built by PostGIS; without it the media type is not available (406). */
  private async requirePostgis(): Promise<void> {
    const { rows } = await this.db.query<{ ok: boolean }>(
      `select exists (select 1 from pg_extension where extname = 'postgis') as ok`,
    );
    if (!rows[0]?.ok) {
      throw new AppError('MEDIA_NOT_AVAILABLE', {
        message: 'application/geo+json needs the PostGIS extension, which this database does not have.',
        pgrstCode: 'PGRST107',
      });
    }
  }

  /** Runs a write as the caller; `.single()` and `tx=rollback` are checked inside the transaction, so a refused write is rolled back. */
  private async write(
    identity: Identity,
    op: 'insert' | 'update' | 'delete',
    table: string,
    stmt: Statement,
    opts: WriteOptions,
  ): Promise<WriteResult> {
    let result: WriteResult | null = null;
    try {
      await this.as(identity, op, async (tx) => {
        const r = await tx.query<{ body: string; total: number | string; inserted?: number | string }>(
          shaped(stmt.text),
          stmt.values,
          { last: commitsBehind(op, opts) },
        );
        const row = r.rows[0];
        const count = row?.total !== undefined ? Number(row.total) : r.rowCount;
        const body = opts.representation ? (row?.body ?? '[]') : null;
        result = { body: opts.single && body !== null ? singleObject(body, count) : body, count };
        if (row?.inserted !== undefined) result.inserted = Number(row.inserted);
        if (opts.single && !opts.representation && count !== 1) singleObject('[]', count);
        if (op !== 'insert') checkMaxAffected(opts.maxAffected, count);
        if (opts.rollback) throw ROLLBACK;
      });
    } catch (err) {
      if (err === ROLLBACK) return result!;
      throw isRlsRefusal(err) ? await explainRlsRefusal(this.db, table, op, err) : err;
    }
    return result!;
  }

  /** POST: inserts records (or upserts with `Prefer: resolution=...`). */
  async insert(
    identity: Identity,
    name: string,
    rows: Array<Record<string, unknown>>,
    rawQuery: string,
    opts: InsertWriteOptions,
  ): Promise<WriteResult> {
    const q = parseRecordsQuery(rawQuery);
    assertOnly(q);
    const stmt = await this.build(
      name,
      (t, ctx) => {
        const onConflict = q.onConflict ?? (opts.resolution ? t.primaryKey : null);
        if (opts.resolution && !onConflict?.length) {
          throw new AppError('INVALID_QUERY', {
            message: `Table "${t.name}" has no primary key: give on_conflict=<columns>.`,
          });
        }
        return buildInsert(
          t,
          opts.csv ? csvJsonCells(t, rows) : rows,
          {
            representation: opts.representation,
            select: q.select,
            columns: q.columns,
            missingDefault: opts.missingDefault,
            // on_conflict alone is a plain insert (a conflict is a 409), as in PostgREST: only
            // `Prefer: resolution=…` makes it an upsert.
            upsert: opts.resolution && onConflict ? { onConflict, resolution: opts.resolution } : null,
          },
          ctx,
        );
      },
      opts.schema,
    );
    return this.write(identity, 'insert', name, stmt, opts);
  }

  /** PATCH: updates the rows matching the filters (at least one filter). */
  async update(
    identity: Identity,
    name: string,
    rawQuery: string,
    patch: Record<string, unknown>,
    opts: WriteOptions,
  ): Promise<WriteResult> {
    const q = parseRecordsQuery(rawQuery);
    const stmt = await this.build(name, (t, ctx) => buildUpdate(t, q, patch, opts.representation, ctx), opts.schema);
    return this.write(identity, 'update', name, stmt, opts);
  }

  /** DELETE: deletes the rows matching the filters (at least one filter). */
  async delete(identity: Identity, name: string, rawQuery: string, opts: WriteOptions): Promise<WriteResult> {
    const q = parseRecordsQuery(rawQuery);
    const stmt = await this.build(name, (t, ctx) => buildDelete(t, q, opts.representation, ctx), opts.schema);
    return this.write(identity, 'delete', name, stmt, opts);
  }

  /**
   * RPC: calls public.<fn> as the caller; a result of rows is read as a relation (select,
   * filters, order, page). `.single()`, `tx=rollback` and `max-affected` are checked inside
   * the transaction, so a refused or rolled-back call leaves nothing written.
   */
  async rpc(
    identity: Identity,
    req: RpcRequest,
    opts: { single?: boolean; rollback?: boolean; maxAffected?: number | null } = {},
  ): Promise<RpcResult> {
    const scope = this.scopes.get(req.schema);
    const ctx = newContext(await scope.schema.all(), await scope.relations.foreignKeys(), undefined, scope.schema.name);
    const key = `${scope.schema.name}.${req.name}`;
    if (req.plan && identity.kind !== 'admin') {
      throw new AppError('MEDIA_NOT_AVAILABLE', {
        message: 'The execution plan (application/vnd.pgrst.plan) is for admin callers only.',
        pgrstCode: 'PGRST107',
      });
    }
    let result: RpcResult | null = null;
    try {
      await this.as(identity, 'rpc', async (tx) => {
        const r = await callFunction(tx, ctx, req, (name, schema) =>
          this.functions(key, scope.schema.version, () => lookupFunctions(this.db, name, schema)),
        );
        result =
          opts.single && r.kind === 'rows' ? { ...r, kind: 'object', body: singleObject(r.body ?? '[]', r.count) } : r;
        if (r.kind === 'rows') checkMaxAffected(opts.maxAffected, r.total);
        if (opts.rollback || req.plan) throw ROLLBACK;
      });
    } catch (err) {
      if (err === ROLLBACK) return result!;
      // The function may have changed under the cache (another instance's DDL): look it up again next time.
      const code = err instanceof AppError ? (pgErrorInfo(err.cause)?.code ?? err.code) : pgErrorInfo(err)?.code;
      if (code && /^(RPC_NOT_FOUND|AMBIGUOUS_FUNCTION|42883|42P13|42804|0A000)$/.test(code)) this.fnCache.delete(key);
      throw err;
    }
    return result!;
  }

  /**
   * A function's overloads, remembered per schema version (this instance's DDL forgets them;
   * a call that fails as if the function changed forgets that one). Only found functions are
   * kept, at most 1000 names.
   */
  private async functions(key: string, version: string, load: () => Promise<FunctionRow[]>): Promise<FunctionRow[]> {
    const hit = this.fnCache.get(key);
    if (hit && hit.version === version) return hit.rows;
    const rows = await load();
    if (this.fnCache.size >= 1000) this.fnCache.clear();
    if (rows.length) this.fnCache.set(key, { version, rows });
    return rows;
  }
}

const ROLLBACK = Symbol('rollback');
const PLAN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'];

function assertOnly(q: RecordsQuery): void {
  if (q.filters.length || q.limit !== null || q.offset !== null || q.order.length) {
    throw new AppError('INVALID_QUERY', {
      message: 'Inserting takes only select, columns and on_conflict in the query string.',
    });
  }
}
