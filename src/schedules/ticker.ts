import type { Db, Queryable } from '../db/types.js';
import { parseCron } from './cron.js';

/** A due time older than this when first seen was missed (every instance was down): the catch-up policy applies. */
export const MISSED_AFTER_MS = 5000;

export interface Due {
  at: Date;
  trigger: 'schedule' | 'catch-up';
}

/**
 * The runs due from `first` up to `now`: each recent one, and for the older (missed) ones one
 * catch-up run at the first missed time (policy "one") or none ("none"). `nextDue` is the
 * first due time after `now`.
 */
export function plan(
  next: (after: Date) => Date | null,
  first: Date,
  now: Date,
  catchUp: 'one' | 'none',
): { dues: Due[]; nextDue: Date | null } {
  const dues: Due[] = [];
  const cutoff = new Date(now.getTime() - MISSED_AFTER_MS);
  let d: Date | null = first;
  if (first < cutoff) {
    if (catchUp === 'one') dues.push({ at: first, trigger: 'catch-up' });
    d = next(new Date(cutoff.getTime() - 1));
    while (d && d < cutoff) d = next(d);
  }
  while (d && d <= now) {
    dues.push({ at: d, trigger: 'schedule' });
    d = next(d);
  }
  return { dues, nextDue: d };
}

interface DueRow {
  id: string;
  cron: string;
  timezone: string;
  catch_up: 'one' | 'none';
  next_due_at: Date;
  timeout_seconds: number;
  retries: number;
}

/** Enqueues one run (in the claiming transaction) and answers whether the queue took it. */
export type Enqueue = (
  tx: Queryable,
  runId: string,
  row: { timeoutSeconds: number; retries: number },
) => Promise<boolean>;

/**
 * One pass of an instance's clock: locks the due schedules no other instance holds (SKIP
 * LOCKED), claims each due time with a unique (schedule, due time) run row, enqueues the run
 * in the same transaction and moves the schedule's next due time on. A run still going when
 * the next one is due makes that one "skipped". Answers the number of runs claimed.
 */
export async function tick(db: Db, enqueue: Enqueue): Promise<number> {
  return db.transaction(async (tx) => {
    const now = (await tx.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
    const { rows } = await tx.query<DueRow>(
      `select id, cron, timezone, catch_up, next_due_at, timeout_seconds, retries from schedules.schedules
        where enabled and next_due_at <= $1 order by next_due_at limit 100 for update skip locked`,
      [now],
    );
    let claimed = 0;
    for (const row of rows) {
      let cron;
      try {
        cron = parseCron(row.cron, row.timezone);
      } catch {
        await tx.query('update schedules.schedules set next_due_at = null where id = $1', [row.id]);
        continue;
      }
      const { dues, nextDue } = plan(cron.next, new Date(row.next_due_at), new Date(now), row.catch_up);
      for (const due of dues) {
        const busy = await tx.query(
          `select 1 from schedules.runs where schedule_id = $1 and status in ('queued', 'running')
              and created_at > $2::timestamptz - make_interval(secs => $3) limit 1`,
          [row.id, now, row.timeout_seconds * (row.retries + 1) + 10],
        );
        const status = busy.rows.length ? 'skipped' : 'queued';
        const ins = await tx.query<{ id: string }>(
          `insert into schedules.runs (schedule_id, due_at, trigger, status, error) values ($1, $2, $3, $4, $5)
           on conflict (schedule_id, due_at) where trigger <> 'manual' do nothing returning id`,
          [row.id, due.at, due.trigger, status, status === 'skipped' ? 'The previous run was still going.' : null],
        );
        if (!ins.rows[0]) continue;
        claimed++;
        if (
          status === 'queued' &&
          !(await enqueue(tx, ins.rows[0].id, { timeoutSeconds: row.timeout_seconds, retries: row.retries }))
        ) {
          await tx.query(
            `update schedules.runs set status = 'skipped', error = 'The job queue is full (JOBS_MAX_QUEUED).' where id = $1`,
            [ins.rows[0].id],
          );
        }
      }
      await tx.query('update schedules.schedules set next_due_at = $2 where id = $1', [row.id, nextDue]);
    }
    return claimed;
  });
}
