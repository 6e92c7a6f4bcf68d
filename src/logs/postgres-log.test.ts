import { describe, expect, it } from 'vitest';
import { postgresLogSink } from './postgres-log.js';
import { maskUrl } from './mask.js';

describe('postgresLogSink', () => {
  it('keeps errors, warnings and slow statements; skips continuation lines that may quote values', () => {
    const got: Array<[string, string, string, Record<string, unknown>]> = [];
    const sink = postgresLogSink({ write: (s, l, m, f = {}) => void got.push([s, l, m, f]) });
    sink('2026-11-25 23:40:00.123 UTC [4242] ERROR:  duplicate key value violates unique constraint "users_email_key"');
    sink('2026-11-25 23:40:00.123 UTC [4242] DETAIL:  Key (email)=(secret@example.com) already exists.');
    sink('2026-11-25 23:40:01.000 UTC [4243] LOG:  duration: 1234.567 ms  execute plinth_abc: select pg_sleep($1)');
    sink('2026-11-25 23:40:02.000 UTC [4244] WARNING:  there is no transaction in progress');
    sink("2026-11-25 23:40:02.000 UTC [4244] STATEMENT:  alter role x password 'hunter2'");
    sink('not a postgres line');
    expect(got).toEqual([
      [
        'postgres',
        'error',
        'duplicate key value violates unique constraint "users_email_key"',
        { pid: 4242, severity: 'ERROR' },
      ],
      [
        'postgres',
        'warn',
        'slow statement: 1234.567 ms',
        { pid: 4243, durationMs: 1234.567, statement: 'select pg_sleep($1)' },
      ],
      ['postgres', 'warn', 'there is no transaction in progress', { pid: 4244, severity: 'WARNING' }],
    ]);
  });
});

describe('maskUrl', () => {
  it.each([
    [
      '/api/storage/buckets/b/objects/k?token=abc.def&download=1',
      '/api/storage/buckets/b/objects/k?token=[redacted]&download=1',
    ],
    [
      '/x?apikey=anon_123&api_key=1&access_token=2&code=3&X-Amz-Signature=4&state=ok',
      '/x?apikey=[redacted]&api_key=[redacted]&access_token=[redacted]&code=[redacted]&X-Amz-Signature=[redacted]&state=ok',
    ],
    ['/api/health', '/api/health'],
  ])('%s', (url, masked) => expect(maskUrl(url)).toBe(masked));
});
