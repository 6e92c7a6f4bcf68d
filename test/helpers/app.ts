import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { type AppOptions, buildApp } from '../../src/app.js';
import { newAdminKey } from '../../src/auth/credentials.js';
import { type Backend, freshDb } from './db.js';

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  /** Base URL of the listening server, e.g. http://127.0.0.1:41234 */
  url: string;
  adminKey: string;
  anonKey: string;
  dataDir: string;
  /** fetch against the server; `path` is relative to the base URL. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts Plinth on a fresh database (a new database on the embedded cluster or on the server
 * Postgres) and a temp data dir, listening on a random port. `env` overrides config;
 * rate limiting is off unless a test turns it on (RATE_LIMIT_PLAN).
 */
export async function startApp(
  backend: Backend = 'embedded',
  env: Record<string, string> = {},
  /** Adds test-only routes before the app starts listening. */
  extend?: (app: FastifyInstance) => void,
  /** Receives the server's log lines (LOG_LEVEL applies); by default logging is off. */
  logStream?: NodeJS.WritableStream,
  /** Options of buildApp beyond logging (the front lane off, to compare answers; a longer drain grace). */
  appOptions: Pick<AppOptions, 'frontLane' | 'drainGraceMs'> = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'plinth-test-'));
  const adminKey = newAdminKey();
  const { db, drop } = await freshDb(backend);
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PLAN: 'off',
    ADMIN_API_KEY: adminKey,
    HOST: '127.0.0.1',
    PORT: '0',
    ...env,
  });
  const deps = await buildDeps(config, { db, engine: backend });
  const { app, url } = await serve(deps, { logStream, extend, ...appOptions });
  return {
    app,
    deps,
    url,
    adminKey,
    anonKey: deps.credentials.anonKey,
    dataDir,
    fetch: (p, init) => fetch(url + p, init),
    async close() {
      await app.close();
      await deps.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Builds the app on `deps` and listens on a free port of 127.0.0.1 (logging off unless a stream is given). */
export async function serve(
  deps: Deps,
  opts: {
    logStream?: NodeJS.WritableStream | false;
    extend?: (app: FastifyInstance) => void;
    compileSchemasEagerly?: boolean;
    frontLane?: boolean;
    drainGraceMs?: number;
  } = {},
): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp(deps, {
    logStream: opts.logStream ?? false,
    compileSchemasEagerly: opts.compileSchemasEagerly,
    frontLane: opts.frontLane,
    drainGraceMs: opts.drainGraceMs,
  });
  opts.extend?.(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  return { app, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` };
}

/** A user created straight in the database with a live session and a signed access token. */
export async function createTestUser(t: TestApp, email = `user-${Math.random().toString(36).slice(2)}@example.com`) {
  const { rows } = await t.deps.db.query<{ id: string }>(
    `insert into auth.users (email, password_hash, email_verified, profile) values ($1, 'test-no-password', true, '{}') returning id`,
    [email],
  );
  const userId = rows[0]!.id;
  const s = await t.deps.db.query<{ id: string }>(
    `insert into auth.sessions (user_id, expires_at) values ($1, now() + interval '1 day') returning id`,
    [userId],
  );
  const sessionId = s.rows[0]!.id;
  const token = await t.deps.tokens.sign({ sub: userId, email, role: 'authenticated', sid: sessionId });
  return { userId, email, sessionId, token, auth: { authorization: `Bearer ${token}` } };
}
