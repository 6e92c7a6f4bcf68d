import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One embedded Postgres cluster for the whole run (test/helpers/db.ts: backend 'embedded').
    globalSetup: ['test/helpers/embedded-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Browser and job-queue checks poll: on 2 loaded cores a second is not always enough.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // 2 cores shared by the servers under test and Postgres: keep parallelism modest. Test files
    // share their fork's module cache (isolate: false): importing the server's modules once per
    // fork instead of once per file took collection from 263 s to 45 s on test/database. Tests
    // keep no module-level state for this reason (no singletons, STYLE.md 7; fake timers reset).
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
  },
});
