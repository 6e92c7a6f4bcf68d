// What this machine lacks for some suites, said once at the start of a run (the vitest
// globalSetup, embedded-setup.ts) rather than found in the list of skipped tests at its end.
import { existsSync } from 'node:fs';
import { CHROMIUM } from '../dashboard/browser.js';
import { hasCommand, postgresUnavailable } from '../faults/procs.js';

/** What is missing → the suites skipped for it and how to enable them. */
export function skippedSuites(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  if (!env.TEST_DATABASE_URL)
    out.push('server Postgres (the postgres half of every HTTP suite, exactly-once schedules): set TEST_DATABASE_URL');
  if (!env.TEST_REDIS_URL)
    out.push('Redis (shared sign-in guard and rate limits, realtime scale-out, wait-for-services): set TEST_REDIS_URL');
  if (!hasCommand('redis-server')) out.push('redis-server (the Redis fault): apt-get install redis-server');
  if (!existsSync(CHROMIUM))
    out.push(`Chromium (the dashboard's browser suites): apt-get install chromium or set CHROMIUM_PATH`);
  if (process.getuid?.() !== 0)
    out.push('root (the disk-full faults on a tmpfs, the embedded Postgres run as an ordinary user): run as root');
  const pg = postgresUnavailable();
  if (pg) out.push(`Postgres binaries (the Postgres outage fault): ${pg}`);
  if (!env.PLINTH_TEST_NODES)
    out.push(
      'other Node.js versions (the compiled server on each): set PLINTH_TEST_NODES to their node binaries, ":"-separated',
    );
  return out;
}

/** The one line printed at the start of a run, or nothing when every suite can run. */
export function skipNotice(env: NodeJS.ProcessEnv = process.env): string | null {
  const s = skippedSuites(env);
  return s.length ? `Skipped on this machine: ${s.join('; ')}.` : null;
}
