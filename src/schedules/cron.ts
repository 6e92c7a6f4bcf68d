import { Cron } from 'croner';
import { AppError } from '../errors/index.js';

/** InsForge's interval form: "30 seconds" (1 to 59). */
const SECONDS_FORM = /^\s*(\d{1,2})\s+seconds?\s*$/i;

/** Whether `tz` is an IANA time zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The cron pattern croner reads: 5 or 6 fields, @hourly-style names, or "N seconds" as a 6-field pattern. */
export function normaliseCron(expr: string): string {
  const m = SECONDS_FORM.exec(expr);
  if (m) {
    const n = Number(m[1]);
    if (n < 1 || n > 59)
      throw new AppError('INVALID_CRON', { message: `"${expr}": the seconds form takes 1 to 59 seconds.` });
    return `*/${n} * * * * *`;
  }
  return expr.trim();
}

/** A parsed schedule: `next(after)` is the first due time strictly after `after`, or null if none. */
export interface CronSchedule {
  next(after: Date): Date | null;
}

/** Parses and checks a cron expression in an IANA time zone; a bad one is INVALID_CRON / INVALID_TIMEZONE. */
export function parseCron(expr: string, timezone: string): CronSchedule {
  if (!isTimeZone(timezone)) {
    throw new AppError('INVALID_TIMEZONE', {
      message: `"${timezone}" is not an IANA time zone (e.g. "UTC", "Europe/Paris").`,
    });
  }
  const pattern = normaliseCron(expr);
  const fields = pattern.split(/\s+/).length;
  if (!pattern.startsWith('@') && fields !== 5 && fields !== 6) {
    throw new AppError('INVALID_CRON', {
      message: `"${expr}" has ${fields} fields; a cron expression has 5 (minute first) or 6 (second first).`,
    });
  }
  let cron: Cron;
  try {
    cron = new Cron(pattern, { timezone, paused: true, mode: '5-or-6-parts' } as never);
  } catch (err) {
    throw new AppError('INVALID_CRON', { message: `"${expr}": ${(err as Error).message}` });
  }
  if (!cron.nextRun()) throw new AppError('INVALID_CRON', { message: `"${expr}" never comes due.` });
  return { next: (after) => cron.nextRun(after) };
}
