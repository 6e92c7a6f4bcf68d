// @insforge/sdk's client.realtime, unchanged, against Plinth: subscribe with presence,
// publish, and a database change on a table channel.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@insforge/sdk';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';

const SETUP = [
  `insert into realtime.channels (pattern, presence) values ('chat:%', true)`,
  `create policy chat_read on realtime.messages for select to authenticated using (channel like 'chat:%')`,
  `create policy chat_write on realtime.messages for insert to authenticated with check (channel like 'chat:%')`,
];

function nextEvent(client: ReturnType<typeof createClient>, event: string): Promise<any> {
  return new Promise((resolve) => client.realtime.once(event, resolve));
}

describe.each(backends())('@insforge/sdk realtime (%s)', (backend) => {
  let t: TestApp;
  const clients: Array<ReturnType<typeof createClient>> = [];
  const admin = () => ({ 'x-api-key': t.adminKey });

  beforeAll(async () => {
    t = await startApp(backend);
    for (const query of SETUP)
      expect((await call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } })).status).toBe(200);
  });
  afterAll(async () => {
    for (const c of clients) c.realtime.disconnect();
    await t?.close();
  });

  it('subscribes, sees presence, publishes and receives database changes', async () => {
    const a = await createTestUser(t);
    const b = await createTestUser(t);
    const ca = createClient({ baseUrl: t.url, anonKey: t.anonKey, accessToken: a.token });
    const cb = createClient({ baseUrl: t.url, anonKey: t.anonKey, accessToken: b.token });
    clients.push(ca, cb);
    const first = await ca.realtime.subscribe('chat:lobby');
    expect(first).toMatchObject({ ok: true, channel: 'chat:lobby' });
    const joined = nextEvent(ca, 'presence:join');
    expect((await cb.realtime.subscribe('chat:lobby')).ok).toBe(true);
    expect((await joined).member.userId).toBe(b.userId);
    expect(ca.realtime.getPresenceState('chat:lobby')).toHaveLength(2);

    const got = nextEvent(ca, 'message');
    await cb.realtime.publish('chat:lobby', 'message', { text: 'hello from the sdk' });
    expect(await got).toMatchObject({
      text: 'hello from the sdk',
      meta: { channel: 'chat:lobby', senderType: 'user', senderId: b.userId },
    });

    const denied = await ca.realtime.subscribe('secret:1');
    expect(denied).toMatchObject({ ok: false, channel: 'secret:1', error: { code: 'CHANNEL_NOT_FOUND' } });

    await call(t, 'POST', '/api/database/tables', {
      headers: admin(),
      body: {
        tableName: 'todos',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: false },
          { name: 'title', type: 'string', nullable: false },
        ],
      },
    });
    await call(t, 'POST', '/api/database/sql', {
      headers: admin(),
      body: { query: 'create policy own on public.todos for all to authenticated using (owner = auth.uid())' },
    });
    expect((await call(t, 'POST', '/api/database/tables/todos/realtime', { headers: admin() })).status).toBe(200);
    expect((await ca.realtime.subscribe('table:todos')).ok).toBe(true);
    const inserted = nextEvent(ca, 'INSERT');
    await call(t, 'POST', '/api/database/records/todos', {
      token: a.token,
      body: [{ owner: a.userId, title: 'milk' }],
    });
    expect(await inserted).toMatchObject({
      type: 'INSERT',
      table: 'todos',
      record: { title: 'milk', owner: a.userId },
      meta: { channel: 'table:todos' },
    });
  });
});
