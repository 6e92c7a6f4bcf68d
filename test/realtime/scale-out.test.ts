// Two API instances on one database and one Redis: a broadcast published on one reaches a
// subscriber of the other, presence spans both, and a database change reaches every
// subscriber on both instances exactly once (each instance delivers to its own sockets).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Socket } from 'socket.io-client';
import { adminUrl, backends, type Backend } from '../helpers/db.js';
import { createTestUser, serve, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';
import { loadConfig } from '../../src/config/index.js';
import { buildDeps, type Deps } from '../../src/deps.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { Db } from '../../src/db/types.js';

// Needs a Redis server: set TEST_REDIS_URL (CI does: redis://127.0.0.1:6379).
const REDIS = process.env.TEST_REDIS_URL;

const SETUP = [
  `insert into realtime.channels (pattern, presence) values ('chat:%', true)`,
  `create policy chat_read on realtime.messages for select to authenticated using (channel like 'chat:%')`,
  `create policy chat_write on realtime.messages for insert to authenticated with check (channel like 'chat:%')`,
  `create policy own on public.notes for all to authenticated using (owner = auth.uid())`,
];

/** A second instance of the same project: same database (own pool), same Redis. */
async function secondInstance(
  t: TestApp,
  backend: Backend,
): Promise<{ app: FastifyInstance; deps: Deps; url: string; close: () => Promise<void> }> {
  const { rows } = await t.deps.db.query<{ name: string }>('select current_database() as name');
  const u = new URL(adminUrl(backend));
  u.pathname = `/${rows[0]!.name}`;
  const db: Db = await openPostgres(u.toString(), { max: 3 });
  const config = loadConfig({
    DATA_DIR: t.dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PLAN: 'off',
    ADMIN_API_KEY: t.adminKey,
    REDIS_URL: REDIS!,
    PORT: '0',
  });
  const deps = await buildDeps(config, { db });
  const { app, url } = await serve(deps);
  return {
    app,
    deps,
    url,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}

describe.skipIf(!REDIS).each(backends())('realtime on two instances with Redis (%s)', (backend) => {
  let t1: TestApp;
  let t2: Awaited<ReturnType<typeof secondInstance>>;
  const open: Socket[] = [];
  const connect = async (url: string, token: string) => {
    const s = await connectSocket(url, token);
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    t1 = await startApp(backend, { REDIS_URL: REDIS! });
    t2 = await secondInstance(t1, backend);
    await call(t1, 'POST', '/api/database/tables', {
      headers: { 'x-api-key': t1.adminKey },
      body: {
        tableName: 'notes',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: false },
          { name: 'body', type: 'string', nullable: true },
        ],
      },
    });
    for (const query of SETUP)
      expect(
        (await call(t1, 'POST', '/api/database/sql', { headers: { 'x-api-key': t1.adminKey }, body: { query } }))
          .status,
      ).toBe(200);
    expect(
      (await call(t1, 'POST', '/api/database/tables/notes/realtime', { headers: { 'x-api-key': t1.adminKey } })).status,
    ).toBe(200);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t2?.close();
    await t1?.close();
  });

  it('carries broadcasts and presence across instances', async () => {
    const a = await createTestUser(t1);
    const b = await createTestUser(t1);
    const sa = await connect(t1.url, a.token);
    const sb = await connect(t2.url, b.token);
    const inA = new Inbox(sa);
    expect((await subscribe(sa, 'chat:x')).ok).toBe(true);
    const ackB = await subscribe(sb, 'chat:x');
    expect(ackB.presence.members.map((m: any) => m.userId).sort()).toEqual([a.userId, b.userId].sort());
    expect((await inA.next('presence:join')).member.userId).toBe(b.userId);
    sb.emit('realtime:publish', { channel: 'chat:x', event: 'message', payload: { text: 'across' } });
    expect(await inA.next('message')).toMatchObject({ text: 'across', meta: { senderId: b.userId } });
    sb.emit('realtime:publish', { channel: 'chat:x', event: 'message', payload: { text: 'second' } });
    expect((await inA.next('message')).text).toBe('second');
    expect(inA.all('message').map((e) => e.body.text)).toEqual(['across', 'second']);
  });

  it('delivers a database change to subscribers on both instances exactly once, by RLS', async () => {
    const a = await createTestUser(t1);
    const b = await createTestUser(t1);
    const a1 = new Inbox(await connect(t1.url, a.token));
    const a2 = new Inbox(await connect(t2.url, a.token));
    const b2 = new Inbox(await connect(t2.url, b.token));
    for (const i of [a1, a2, b2]) expect((await subscribe(i.socket, 'table:notes')).ok).toBe(true);
    const insert = (token: string, owner: string, body: string) =>
      call(t1, 'POST', '/api/database/records/notes', { token, body: [{ owner, body }] });
    await insert(a.token, a.userId, 'one');
    await insert(a.token, a.userId, 'two');
    await insert(b.token, b.userId, 'of b');
    for (const i of [a1, a2]) {
      expect((await i.next('INSERT')).record.body).toBe('one');
      expect((await i.next('INSERT')).record.body).toBe('two');
    }
    expect((await b2.next('INSERT')).record.body).toBe('of b');
    // A marker after everything: by then both instances have handled all three changes.
    await insert(a.token, a.userId, 'marker');
    for (const i of [a1, a2]) expect((await i.next('INSERT')).record.body).toBe('marker');
    for (const i of [a1, a2]) expect(i.all('INSERT').map((e) => e.body.record.body)).toEqual(['one', 'two', 'marker']);
    expect(b2.all('INSERT').map((e) => e.body.record.body)).toEqual(['of b']);

    await call(t1, 'POST', '/api/database/sql', {
      headers: { 'x-api-key': t1.adminKey },
      body: { query: `select realtime.publish('table:notes', 'notice', '{"n":1}')` },
    });
    for (const i of [a1, a2, b2]) expect((await i.next('notice')).n).toBe(1);
    await insert(b.token, b.userId, 'marker b');
    expect((await b2.next('INSERT')).record.body).toBe('marker b');
    for (const i of [a1, a2, b2]) expect(i.all('notice')).toHaveLength(1);
  });
});
