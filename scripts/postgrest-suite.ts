// Runs postgrest-js's own test suite (the Supabase team's runtime tests, written against a real
// PostgREST) unchanged against Plinth's /api/db, and prints how many of its tests pass.
//
//   npm run suite:postgrest -- <postgrest-js package dir> [--as anon|admin] [--strip-envelope] [--out <dir>]
//
// The suite is not part of this repository: docs/clients.md ("postgrest-js's own suite") says
// which snapshot to take and which tools (jest) to install beside it. A fresh database on
// TEST_DATABASE_URL (default the local server) gets the suite's fixture through the admin SQL
// route, Plinth serves it on a random port, and a proxy at 127.0.0.1:54321/rest/v1 (the URL
// the suite's files name) forwards to /api/db with the anon key (or the admin key).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { buildDeps } from '../src/deps.js';
import { newAdminKey } from '../src/auth/credentials.js';
import { openPostgres } from '../src/db/postgres.js';
import { databaseRoles } from '../src/db/owner.js';

/** The suite's files that test the client alone (mocked fetch, timers): not run. */
const CLIENT_ONLY = [
  'retry',
  'fetch-errors',
  'timeout-and-url-length',
  'version-and-constants',
  'headers-serialization',
];
/** Run and counted in the total, but they mock fetch too: not server tests. */
const MOCKED = ['permission-hints'];
/** The suite's URL of PostgREST (Supabase CLI's API gateway); a proxy there forwards to /api/db. */
const SUITE_PORT = 54321;
const SUITE_PREFIX = '/rest/v1';
/** The envelope's fields that PostgREST's error body lacks (`--strip-envelope` drops them). */
const ENVELOPE_ONLY = ['statusCode', 'error', 'nextActions'];

function args() {
  const a = process.argv.slice(2);
  const pkg = a.find((x) => !x.startsWith('--') && !['anon', 'admin'].includes(x));
  if (!pkg || !existsSync(path.join(pkg, 'test')))
    throw new Error('usage: postgrest-suite.ts <postgrest-js package dir> [--as anon|admin] [--out dir]');
  const as = a.includes('--as') ? (a[a.indexOf('--as') + 1] ?? 'anon') : 'anon';
  const out = a.includes('--out') ? (a[a.indexOf('--out') + 1] ?? '') : mkdtempSync(path.join(tmpdir(), 'pgjs-suite-'));
  return { pkg: path.resolve(pkg), as, out: path.resolve(out), strip: a.includes('--strip-envelope') };
}

/**
 * The suite's fixture as Supabase's CLI would load it, with what a plain Postgres lacks taken
 * out: the `authenticator` role's PostgREST settings (Plinth has no such role) and PostGIS
 * (the shops' geometry is text; GeoJSON answers 406 without PostGIS).
 */
function fixture(pkg: string): string {
  const dir = path.join(pkg, 'test', 'supabase');
  const schema = readFileSync(path.join(dir, 'migrations', '00000000000000_schema.sql'), 'utf8')
    .replace(/^alter role authenticator .*$/gim, '')
    .replace(/^create extension if not exists postgis .*$/gim, '')
    .replace(/extensions\.geometry\(POINT, 4326\)/g, 'text');
  const seed = readFileSync(path.join(dir, 'seed.sql'), 'utf8');
  // Supabase's default privileges: anon and authenticated may use what public holds.
  const grants = `grant all on all tables in schema public to anon, authenticated;
grant all on all sequences in schema public to anon, authenticated;
grant execute on all functions in schema public to anon, authenticated;
grant usage on schema personal to anon, authenticated;
grant execute on all functions in schema personal to anon, authenticated;`;
  return `${schema}\n${seed}\n${grants}`;
}

async function freshDatabase(adminUrl: string) {
  const name = `plinth_pgjs_suite_${Date.now().toString(36)}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`create database ${name} template template0 encoding 'UTF8' locale_provider icu icu_locale 'und'`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const drop = async () => {
    const d = new pg.Client({ connectionString: adminUrl });
    await d.connect();
    await d.query(`drop database if exists ${name} with (force)`);
    // The database's roles are cluster-wide: they go with it.
    for (const role of databaseRoles(name)) await d.query(`drop role if exists ${role}`);
    await d.end();
  };
  return { url: u.toString(), drop };
}

/** One connection per forwarded request: no idle socket to Plinth can be closed under a request. */
const upstream = new http.Agent({ keepAlive: false });

/** Forwards 127.0.0.1:54321/rest/v1/* to Plinth's /api/db/* with the caller's key. */
function proxy(target: string, key: string, stripEnvelope: boolean): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(SUITE_PREFIX)) {
      res.writeHead(404).end();
      return;
    }
    const headers = { ...req.headers, host: new URL(target).host };
    if (!headers.authorization) headers.authorization = `Bearer ${key}`;
    const up = http.request(
      `${target}/api/db${url.slice(SUITE_PREFIX.length)}`,
      { method: req.method, headers, agent: upstream },
      (r) => {
        const status = r.statusCode ?? 502;
        if (!stripEnvelope || status < 300 || !String(r.headers['content-type']).startsWith('application/json')) {
          res.writeHead(status, r.headers);
          r.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          for (const k of ENVELOPE_ONLY) delete body[k];
          const text = JSON.stringify(body);
          const h = { ...r.headers, 'content-length': String(Buffer.byteLength(text)) };
          res.writeHead(status, h).end(text);
        });
      },
    );
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  // Longer than the client's idle sockets live, so a reused socket is never closed under a request.
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(SUITE_PORT, '127.0.0.1', () => resolve(server));
  });
}

function jest(pkg: string, out: string): Promise<number> {
  const config = {
    rootDir: pkg,
    preset: 'ts-jest',
    testEnvironment: 'node',
    maxWorkers: 1,
    testSequencer: path.join(pkg, 'test', 'testSequencer.js'),
    testTimeout: 30000,
    testPathIgnorePatterns: ['/node_modules/', ...CLIENT_ONLY.map((f) => `/test/${f}\\.test\\.ts$`), '/test/v12/'],
    transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: path.join(pkg, 'tsconfig.test.json') }] },
  };
  const configFile = path.join(out, 'jest.config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const bin = createRequire(import.meta.url).resolve('jest/bin/jest', { paths: [pkg] });
  const child = spawn(
    process.execPath,
    [bin, '--config', configFile, '--runInBand', '--ci', '--json', '--outputFile', path.join(out, 'results.json')],
    {
      cwd: pkg,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

interface JestFile {
  name: string;
  message: string;
  assertionResults: Array<{ status: string; fullName: string }>;
}

function summarize(out: string): { passed: number; failed: number; mocked: number; mockedTotal: number } {
  const r = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
  const lines: string[] = [];
  let passed = 0;
  let failed = 0;
  let mocked = 0;
  let mockedTotal = 0;
  for (const file of r.testResults as JestFile[]) {
    const name = path.basename(file.name);
    const p = file.assertionResults.filter((a) => a.status === 'passed').length;
    const f = file.assertionResults.filter((a) => a.status === 'failed');
    passed += p;
    failed += f.length;
    if (MOCKED.some((m) => name === `${m}.test.ts`)) {
      mocked += p;
      mockedTotal += p + f.length;
    }
    lines.push(
      `${name}: ${p} passed, ${f.length} failed${file.assertionResults.length ? '' : ` (${file.message.split('\n')[0]})`}`,
    );
    for (const a of f) lines.push(`  FAIL ${a.fullName}`);
  }
  writeFileSync(path.join(out, 'failures.txt'), `${lines.join('\n')}\n`);
  console.log(lines.filter((l) => !l.startsWith('  ')).join('\n'));
  return { passed, failed, mocked, mockedTotal };
}

async function main() {
  const { pkg, as, out, strip } = args();
  mkdirSync(out, { recursive: true });
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { url, drop } = await freshDatabase(adminUrl);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'pgjs-suite-data-'));
  const adminKey = newAdminKey();
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PLAN: 'off',
    ADMIN_API_KEY: adminKey,
    DB_SCHEMAS: 'personal',
    HOST: '127.0.0.1',
    PORT: '0',
  });
  const db = await openPostgres(url, { max: 10 });
  const deps = await buildDeps(config, { db, engine: 'postgres' });
  const app = await buildApp(deps, { logStream: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  let server: http.Server | undefined;
  try {
    const r = await fetch(`${base}/api/database/sql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: fixture(pkg) }),
    });
    if (!r.ok) throw new Error(`the fixture failed (${r.status}): ${await r.text()}`);
    server = await proxy(base, as === 'admin' ? adminKey : deps.credentials.anonKey, strip);
    await jest(pkg, out);
    const { passed, failed, mocked, mockedTotal } = summarize(out);
    console.log(
      `\npostgrest-js suite against /api/db as ${as}${strip ? ', envelope fields stripped' : ''}: ${passed} of ${passed + failed} tests pass (${passed - mocked} of ${passed + failed - mockedTotal} server tests; details: ${path.join(out, 'failures.txt')})`,
    );
  } finally {
    server?.close();
    await app.close();
    await deps.close();
    await drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
