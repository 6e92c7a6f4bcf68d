import type { Db, Queryable } from '../db/types.js';

/**
 * How long a save's transaction may stay open waiting for its check (the module's load): past
 * it the transaction lets go of the row (and, on PGlite, of the whole database) and the write
 * is made again once the check is done.
 */
export const HOLD_MS = 500;

const LATE = Symbol('late');

/**
 * A save's write, made while its check runs: in a transaction committed only once the check
 * passed, so a refused check stores nothing (rolled back) and the write's round trips overlap
 * the load instead of following it. The check's error wins over the write's (a bad module is
 * reported as it was when the check came first); both have settled when this settles. A check
 * slower than `holdMs` is not waited for inside the transaction: it is rolled back, the check
 * awaited, and the write made on its own.
 */
export async function writeChecked<T>(
  db: Db,
  check: Promise<unknown>,
  write: (q: Queryable) => Promise<T>,
  holdMs = HOLD_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), holdMs);
  });
  try {
    return await db.transaction(async (tx) => {
      const [row, done] = await Promise.allSettled([write(tx), Promise.race([check, late])]);
      if (done.status === 'rejected') throw done.reason;
      if (row.status === 'rejected') throw row.reason;
      if (done.value === LATE) throw LATE;
      return row.value;
    });
  } catch (err) {
    if (err !== LATE) {
      // A write that failed first: the check is still over before the save answers.
      await check.catch(() => {});
      throw err;
    }
  } finally {
    clearTimeout(timer);
  }
  await check;
  return write(db);
}
