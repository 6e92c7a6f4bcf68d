import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { Db, Queryable, QueryOptions, QueryResult, Statement } from './types.js';
import { pgliteTemporalText } from './type-parsers.js';
import { translatePgError } from './errors.js';
import { isReadOnly, readOnlyAware } from './read-only.js';

const LISTEN_CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** Embedded Postgres in this process. `dataDir` null keeps everything in memory. */
export async function openPglite(dataDir: string | null): Promise<Db> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Imported here: only DATABASE_URL=pglite:// (or a carry-over) loads PGlite, not a default start.
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create(dataDir ?? 'memory://');
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<T>(
      sql: string | Statement,
      params: readonly unknown[] = [],
      opts?: QueryOptions,
    ): Promise<QueryResult<T>> {
      try {
        const parsers = opts?.temporalText ? { parsers: pgliteTemporalText } : undefined;
        const r = await q.query<T>(typeof sql === 'string' ? sql : sql.text, params as unknown[], parsers);
        return {
          rows: r.rows,
          rowCount: r.affectedRows ?? r.rows.length,
          fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
        };
      } catch (err) {
        throw translatePgError(err);
      }
    },
    async exec(sql: string) {
      try {
        await q.exec(sql);
      } catch (err) {
        throw translatePgError(err);
      }
    },
  });
  const root = wrap(pg);
  const db: Db = {
    kind: 'pglite',
    query: root.query,
    transaction: (fn) =>
      pg.transaction(async (tx) => {
        if (isReadOnly()) await tx.query('set transaction read only');
        return fn(wrap(tx));
      }),
    exec: root.exec,
    listen: async (channel, onPayload) => {
      if (!LISTEN_CHANNEL.test(channel)) throw new Error(`Bad channel name ${channel}`);
      const unlisten = await pg.listen(channel, onPayload);
      return async () => {
        if (!pg.closed) await unlisten();
      };
    },
    close: async () => {
      if (!pg.closed) await pg.close();
    },
  };
  return { ...db, ...readOnlyAware(db) };
}
