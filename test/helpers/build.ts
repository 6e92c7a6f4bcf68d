// The compiled server (`node <dir>/main.js`, as `npm start` runs it) for the tests that start
// Plinth as a real process: built ONCE per test run by the first test file that asks, into a
// folder of the project root (scripts/build.mjs needs that); the others wait for it. The run's
// global setup (embedded-setup.ts) names the folder and removes it at the end.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WAIT_MS = 300_000;

/** The folder of this run's build, relative to the project root (e.g. `.build-test-1234`). */
export function buildDirName(): string {
  const run = process.env.PLINTH_TEST_RUN;
  if (!run) throw new Error('PLINTH_TEST_RUN is not set: run the tests with vitest (its global setup sets it).');
  return `.build-test-${run}`;
}

let built: Promise<string> | null = null;

/** This run's build of the current source, made on first use; resolves to its folder name. */
export function builtServer(): Promise<string> {
  built ??= buildOnce(buildDirName());
  return built;
}

async function buildOnce(dir: string): Promise<string> {
  const lock = path.join(ROOT, `${dir}.lock`);
  const done = path.join(lock, 'done');
  const failed = path.join(lock, 'failed');
  try {
    mkdirSync(lock); // atomic: exactly one test file of the run builds
  } catch {
    return waitFor(dir, done, failed);
  }
  try {
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', dir], { cwd: ROOT });
    writeFileSync(done, '');
    return dir;
  } catch (err) {
    writeFileSync(failed, String((err as Error).message));
    throw err;
  }
}

async function waitFor(dir: string, done: string, failed: string): Promise<string> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (existsSync(done)) return dir;
    if (existsSync(failed)) throw new Error(`The shared build failed: ${readFileSync(failed, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`The shared build did not finish within ${WAIT_MS / 1000} s.`);
}

/**
 * This process's environment without Plinth's configuration (database, Redis, S3, keys,
 * public URL) or the test run's own variables, plus `extra`: what a test gives the built
 * server it spawns, so nothing of the run leaks into it unless the test sets it.
 */
export function builtServerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(DATABASE_URL|REDIS_URL|S3_|ANON_KEY|JWT_SECRET|ADMIN_API_KEY|PUBLIC_URL|TEST_)/.test(k))
      env[k] = v;
  return { ...env, ...extra };
}
