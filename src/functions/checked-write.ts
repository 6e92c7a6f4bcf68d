import type { Db } from '../db/types.js';
import { FunctionStore, type Saved } from './store.js';

/**
 * A save's row, written while its check loads the module: in a transaction committed once the
 * check passed and rolled back when it refuses (nothing is stored), so the save waits for the
 * longer of the two, not their sum. The check's refusal wins over the write's error, as when
 * the write came after it. On PGlite the write comes after the check: its one connection
 * would wait for untrusted code's load, and every other query with it. No check (the save
 * loads nothing): the row is written at once.
 */
export async function writeChecked<C>(
  db: Db,
  write: (store: FunctionStore) => Promise<Saved>,
  check: Promise<C> | null,
): Promise<{ fn: Saved; checked: C | null }> {
  if (check === null) return { fn: await write(new FunctionStore(db)), checked: null };
  if (db.kind === 'pglite') {
    const checked = await check;
    return { fn: await write(new FunctionStore(db)), checked };
  }
  check.catch(() => {}); // heard below, unless the transaction fails to begin
  return db.transaction(async (tx) => {
    const [checked, fn] = await Promise.allSettled([check, write(new FunctionStore(tx))]);
    if (checked.status === 'rejected') throw checked.reason;
    if (fn.status === 'rejected') throw fn.reason;
    return { fn: fn.value, checked: checked.value };
  });
}
