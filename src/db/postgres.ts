import pg from 'pg';
import type { Db, Queryable, QueryResult, Statement } from './types.js';
import { translatePgError } from './errors.js';
import { AppError } from '../errors/index.js';
import { PgListener } from './listen.js';

// Match PGlite's parsing so both backends hand the same values to the domain code:
// int8 (counts) as numbers, numeric stays a string.
pg.types.setTypeParser(20, (v) => Number(v));

const CONNECT_TIMEOUT_MS = 3000;

/** pg-pool's connect timeout and a client that lost its server carry no code: name them here. */
function translate(err: unknown): unknown {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (err instanceof Error && e?.code === undefined && /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error)/.test(err.message)) {
    return new AppError('DATABASE_UNAVAILABLE', { cause: err });
  }
  return translatePgError(err);
}

/** Queries on a pool or a checked-out client; a Statement named (prepared) when `prepare`. */
function queryable(q: pg.Pool | pg.PoolClient, prepare: boolean): Queryable {
  return {
    async query<T>(sql: string | Statement, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      const values = params as unknown[];
      const config = typeof sql === 'string' ? { text: sql, values } : prepare ? { name: sql.name, text: sql.text, values } : { text: sql.text, values };
      try {
        const res = (await q.query(config)) as pg.QueryResult | pg.QueryResult[];
        // A script of several statements (no parameters) answers once per statement: keep the last.
        const r = Array.isArray(res) ? res[res.length - 1]! : res;
        return { rows: (r.rows ?? []) as T[], rowCount: r.rowCount ?? r.rows?.length ?? 0, fields: r.fields?.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })) };
      } catch (err) {
        throw translate(err);
      }
    },
    async exec(sql: string) {
      try {
        await q.query(sql);
      } catch (err) {
        throw translate(err);
      }
    },
  };
}

/**
 * A pool on a server Postgres (any Postgres >= 14, also behind PgBouncer in transaction mode).
 * `prepare`: run each Statement as a named prepared statement (off by default: PgBouncer in
 * transaction mode loses them between transactions; on for the embedded server).
 */
export async function openPostgres(url: string, opts: { max?: number; prepare?: boolean } = {}): Promise<Db> {
  // A server that is down answers a connect with ECONNREFUSED at once; one that does not
  // answer at all (a dead host, a full backlog) must not hold a request longer than this.
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: 'plinth',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
  // An idle client losing its connection must not crash the process; nor may a checked-out
  // one between two queries (Postgres stopped): its next query fails, and the pool drops it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const wrap = (q: pg.Pool | pg.PoolClient) => queryable(q, opts.prepare === true);
  const root = wrap(pool);
  const listener = new PgListener(url);
  // Fail fast at start when the server is unreachable.
  await root.query('select 1');
  return {
    kind: 'postgres',
    query: root.query,
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw translate(err);
      }
      let broken = false;
      // A checked-out client whose connection dies (the server restarted) emits 'error':
      // without a listener that would crash the process. The query in flight fails anyway.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('begin');
        const result = await fn(wrap(client));
        await client.query('commit');
        return result;
      } catch (err) {
        try {
          await client.query('rollback');
        } catch {
          broken = true;
        }
        throw translate(err);
      } finally {
        // A client whose rollback failed is in an unknown state: destroy it.
        client.off('error', onError);
        client.release(broken);
      }
    },
    exec: root.exec,
    listen: (channel, onPayload, onState) => listener.listen(channel, onPayload, onState),
    close: async () => {
      await listener.close();
      if (!pool.ended) await pool.end();
    },
  };
}
