import { describe, expect, it } from 'vitest';
import { normaliseCron, parseCron } from './cron.js';
import { MISSED_AFTER_MS, plan } from './ticker.js';

describe('cron parsing', () => {
  it('reads 5 and 6 fields, names and the "N seconds" form', () => {
    const from = new Date('2026-03-01T10:00:00.500Z');
    expect(parseCron('*/15 * * * *', 'UTC').next(from)?.toISOString()).toBe('2026-03-01T10:15:00.000Z');
    expect(parseCron('30 * * * * *', 'UTC').next(from)?.toISOString()).toBe('2026-03-01T10:00:30.000Z');
    expect(parseCron('@hourly', 'UTC').next(from)?.toISOString()).toBe('2026-03-01T11:00:00.000Z');
    expect(normaliseCron('5 seconds')).toBe('*/5 * * * * *');
    expect(parseCron('1 seconds', 'UTC').next(from)?.toISOString()).toBe('2026-03-01T10:00:01.000Z');
  });

  it('counts in the IANA time zone, across a DST change', () => {
    // 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer (DST starts 2026-03-29).
    const s = parseCron('0 9 * * *', 'Europe/Paris');
    expect(s.next(new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(s.next(new Date('2026-03-27T12:00:00Z'))?.toISOString()).toBe('2026-03-28T08:00:00.000Z');
  });

  it.each([['61 * * * *'], ['* * *'], ['0 seconds'], ['90 seconds'], ['not cron'], ['* * * * * * * *']])(
    'refuses %s',
    (expr) => {
      expect(() => parseCron(expr, 'UTC')).toThrow(expect.objectContaining({ code: 'INVALID_CRON' }));
    },
  );

  it('refuses an unknown time zone', () => {
    expect(() => parseCron('* * * * *', 'Mars/Olympus')).toThrow(expect.objectContaining({ code: 'INVALID_TIMEZONE' }));
  });
});

describe('due times of one tick', () => {
  const every = parseCron('1 seconds', 'UTC').next;
  const now = new Date('2026-03-01T10:00:10.200Z');

  it('claims each recent due time', () => {
    const r = plan(every, new Date('2026-03-01T10:00:08Z'), now, 'one');
    expect(r.dues.map((d) => [d.at.toISOString().slice(17), d.trigger])).toEqual([
      ['08.000Z', 'schedule'],
      ['09.000Z', 'schedule'],
      ['10.000Z', 'schedule'],
    ]);
    expect(r.nextDue?.toISOString()).toBe('2026-03-01T10:00:11.000Z');
  });

  it('turns a long outage into one catch-up run, or none', () => {
    const first = new Date(now.getTime() - 3600_000);
    const one = plan(every, first, now, 'one');
    expect(one.dues.filter((d) => d.trigger === 'catch-up')).toEqual([{ at: first, trigger: 'catch-up' }]);
    expect(one.dues.filter((d) => d.trigger === 'schedule').length).toBeLessThanOrEqual(MISSED_AFTER_MS / 1000 + 1);
    expect(plan(every, first, now, 'none').dues.some((d) => d.trigger === 'catch-up')).toBe(false);
  });
});
