// Admin SQL (POST /api/database/sql, /advance/rawsql, MCP run-raw-sql, the dashboard's SQL
// page): what the admin wrote, run as the owner role, answered as Postgres gives it.
import type { Db } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';
import { adminSqlError } from './sql-error.js';

export interface AdminSqlResult {
  rows: unknown[];
  rowCount: number;
  fields: Array<{ name: string; dataTypeID: number }>;
}

// A lone VACUUM (the advisor's fix for dead rows) cannot run in a transaction block (25001):
// it runs on its own. Only a text that is one VACUUM statement and nothing else (no `;` but a
// last one, no comment that could hide a second statement).
const LONE_VACUUM = /^\s*vacuum\b[^;]*;?\s*$/i;
const isLoneVacuum = (query: string, params: unknown[]) =>
  params.length === 0 && LONE_VACUUM.test(query) && !/--|\/\*/.test(query);

/**
 * Runs admin SQL in one transaction on `db` (the owner's pool). One statement with bind
 * parameters; without parameters a script of several (the rows of the last come back). Date
 * and time values come back as Postgres's text (src/db/type-parsers.ts).
 */
export async function runAdminSql(db: Db, query: string, params: unknown[]): Promise<AdminSqlResult> {
  try {
    const r = isLoneVacuum(query, params)
      ? await db.query(query, [], { temporalText: true })
      : await db
          .transaction((tx) => tx.query(query, params, { temporalText: true }))
          .catch(async (err) => {
            // PGlite prepares every query, so a script of several statements fails with a syntax
            // error (42601); without parameters it runs as a script instead (no rows come back).
            if (params.length || pgErrorInfo(err)?.code !== '42601' || db.kind !== 'pglite') throw err;
            await db.transaction((tx) => tx.exec(query));
            return { rows: [], rowCount: 0, fields: [] };
          });
    const rows = r.rows ?? [];
    // PGlite counts only changed rows: a select reports how many it returned.
    return { rows, rowCount: Math.max(r.rowCount ?? 0, rows.length), fields: r.fields ?? [] };
  } catch (err) {
    throw adminSqlError(err, query);
  }
}
