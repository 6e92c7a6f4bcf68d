import type { Queryable } from '../db/types.js';
import { sql, type NewObjectRow, type ObjectRow } from './metadata.js';

/**
 * Statements in flight at once. Two: while one waits for its commit, the rows that come
 * meanwhile can go in the next without waiting for it. (One kept each write waiting a whole
 * statement more, and cost a third of the req/s at 8 writers; more statements mean smaller
 * ones, and Postgres's CPU per write grows back.)
 */
const IN_FLIGHT = 2;
/** Rows in one statement at most. */
const MAX_ROWS = 256;

interface Waiting {
  row: NewObjectRow;
  id: string;
  resolve(row: ObjectRow): void;
  reject(err: unknown): void;
}

/**
 * The metadata rows of object writes, several in one statement (issue #38): a row waits until
 * the loop's next turn, or while a statement is in flight, and goes with the others waiting
 * then, so Postgres binds, executes and commits once for them all. Each write still resolves
 * only once its own row is committed, with its own row.
 *
 * Mixing writers is safe: the statement runs with the server's own rights (no caller role, no
 * RLS); what each caller may write was checked before its bytes were stored, and the uploader
 * in its row is its own. Rows of one statement have distinct keys, in one order (so statements
 * of two instances lock rows in the same order). A statement that fails changed nothing (one
 * statement is one transaction): each of its rows is then written on its own, so a failure
 * (a bucket deleted meanwhile, a user deleted) is only the failure of its own write.
 */
export class ObjectRows {
  private waiting: Waiting[] = [];
  /** Keys of the rows in flight: another row of one of them waits for its answer. */
  private readonly flying = new Set<string>();
  private inFlight = 0;
  private scheduled = false;
  /** Statements sent so far, and the rows they carried (tests). */
  readonly sent = { statements: 0, rows: 0 };

  constructor(private readonly db: Queryable) {}

  /** Creates or replaces `row` (see sql.upsertObject); resolves once it is committed. */
  write(row: NewObjectRow): Promise<ObjectRow> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, id: `${row.bucket}/${row.key}`, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= IN_FLIGHT || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < IN_FLIGHT && this.waiting.length > 0) {
        const batch = this.take();
        if (batch.length === 0) break;
        this.inFlight++;
        for (const w of batch) this.flying.add(w.id);
        void this.send(batch).finally(() => {
          for (const w of batch) this.flying.delete(w.id);
          this.inFlight--;
          this.schedule();
        });
      }
    });
  }

  /**
   * Up to MAX_ROWS waiting rows of distinct keys none of which is in flight, sorted by key; a
   * second row of a key waits, so the rows of one key are written in the order they came.
   */
  private take(): Waiting[] {
    const batch = new Map<string, Waiting>();
    const rest: Waiting[] = [];
    for (const w of this.waiting) {
      if (batch.size < MAX_ROWS && !batch.has(w.id) && !this.flying.has(w.id)) batch.set(w.id, w);
      else rest.push(w);
    }
    this.waiting = rest;
    return [...batch.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.sent.statements++;
    this.sent.rows += batch.length;
    if (batch.length > 1) {
      let rows: ObjectRow[] | null = null;
      try {
        rows = await sql.upsertObjects(
          this.db,
          batch.map((w) => w.row),
        );
      } catch {
        // Nothing of it was applied: each row on its own below, with its own answer.
      }
      if (rows) return batch.forEach((w, i) => w.resolve(rows[i]!));
    }
    await Promise.all(batch.map((w) => sql.upsertObject(this.db, w.row).then(w.resolve, w.reject)));
  }
}
