import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { ESTIMATE_FROM, type Statement } from './compile.js';

/** A page of a read: the body, the total of matching rows (or its estimate), where it starts and how many it holds. */
export interface Page {
  body: string;
  /** null: not counted (`/api/db` without `Prefer: count`). */
  total: number | null;
  offset: number;
  count: number;
}

/**
 * The page of a read's one result row. `count=planned` (total null) and `count=estimated` past
 * ESTIMATE_FROM rows take the planner's estimate of the filtered rows, by EXPLAIN in the caller's
 * transaction (so RLS policies are part of the plan), never less than the rows up to this page's
 * end. With `estimated`, a page that is not full is the end of the rows, so its total is exact.
 */
export async function pageOf(
  tx: Queryable,
  stmt: Statement,
  row: { body: string; total: number | string | null; rows?: number | string },
  offset: number,
  limit: number,
): Promise<Page> {
  // Not counted (count `none`): the page's own rows, no total.
  if (!stmt.estimate && row.rows !== undefined) return { body: row.body, total: null, offset, count: Number(row.rows) };
  if (!stmt.estimate || row.rows === undefined) {
    const total = Number(row.total);
    return { body: row.body, total, offset, count: Math.max(0, Math.min(limit, total - offset)) };
  }
  const count = Number(row.rows);
  // count=estimated: a page that is not full ends the rows, so the total is exact without any
  // estimate. count=planned (total null) is the planner's estimate whatever the page (PostgREST).
  if (row.total !== null && count < limit && (count > 0 || offset === 0))
    return { body: row.body, total: offset + count, offset, count };
  let total = row.total === null ? NaN : Number(row.total);
  if (!(total <= ESTIMATE_FROM)) total = Math.max(await plannedRows(tx, stmt.estimate), offset + count);
  return { body: row.body, total, offset, count };
}

async function plannedRows(tx: Queryable, stmt: Statement): Promise<number> {
  const { rows } = await tx.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${stmt.text}`, stmt.values);
  const cell = rows[0]?.['QUERY PLAN'];
  const plan = (typeof cell === 'string' ? JSON.parse(cell) : cell) as Array<{ Plan?: { 'Plan Rows'?: number } }>;
  return Math.round(plan[0]?.Plan?.['Plan Rows'] ?? 0);
}

/** The one row of a JSON array text as an object, or 406 PGRST116 when there is not exactly one. */
export function singleObject(body: string, count: number): string {
  if (count !== 1) {
    throw new AppError('NOT_SINGLE_ROW', { details: `The result contains ${count} rows`, pgrstCode: 'PGRST116' });
  }
  const text = body.trim();
  return text.slice(1, -1).trim();
}
