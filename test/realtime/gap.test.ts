// Changes committed while an instance's LISTEN connection is down are lost for its sockets:
// once it listens again, each subscriber of a table channel hears realtime:error
// CHANGES_MISSED for that channel (and refetches); broadcast channels hear nothing, and later
// changes flow as before. The connection is cut for real, with pg_terminate_backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { createClient } from '@insforge/sdk';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';

/** `p`, or a failure naming `what` after `ms` (a bounded wait, never a fixed sleep). */
function within<T>(p: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  );
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const CUT = `select pg_terminate_backend(pid) as cut from pg_stat_activity where application_name = 'plinth-listen' and datname = current_database()`;

describe.each(backends())('realtime changes missed while LISTEN is down (%s)', (backend) => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof createTestUser>>;
  const open: Socket[] = [];
  const sql = async (query: string) => {
    const r = await call(t, 'POST', '/api/database/sql', { headers: { 'x-api-key': t.adminKey }, body: { query } });
    expect(r.status, `${query}: ${r.text}`).toBe(200);
    return r.body;
  };
  const insert = (body: string) =>
    call(t, 'POST', '/api/database/records/gap_notes', {
      token: a.token,
      body: [{ owner: a.userId, body }],
      headers: { prefer: 'return=representation' },
    });

  beforeAll(async () => {
    t = await startApp(backend);
    a = await createTestUser(t);
    const created = await call(t, 'POST', '/api/database/tables', {
      headers: { 'x-api-key': t.adminKey },
      body: {
        tableName: 'gap_notes',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: false },
          { name: 'body', type: 'string', nullable: true },
        ],
      },
    });
    expect(created.status).toBe(201);
    await sql(
      'create policy own on public.gap_notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())',
    );
    await sql(`insert into realtime.channels (pattern) values ('room:%')`);
    await sql("create policy room_read on realtime.messages for select to authenticated using (channel like 'room:%')");
    expect(
      (await call(t, 'POST', '/api/database/tables/gap_notes/realtime', { headers: { 'x-api-key': t.adminKey } }))
        .status,
    ).toBe(200);
  });
  const clients: Array<ReturnType<typeof createClient>> = [];
  afterAll(async () => {
    for (const c of clients) c.realtime.disconnect();
    for (const s of open) s.close();
    await t?.close();
  });

  it('tells each table-channel subscriber CHANGES_MISSED once LISTEN is back, then delivers as before', async () => {
    const [row] = (await insert('first')).body;
    const s = await connectSocket(t.url, a.token);
    const bystander = await connectSocket(t.url, a.token);
    open.push(s, bystander);
    const inbox = new Inbox(s);
    const inBystander = new Inbox(bystander);
    const channels = ['table:gap_notes', `table:gap_notes:${row.id}`];
    for (const c of [...channels, 'room:1']) expect(await subscribe(s, c)).toMatchObject({ ok: true, channel: c });
    expect(await subscribe(bystander, 'room:1')).toMatchObject({ ok: true });
    const gapsBefore = t.app.realtime.hub.stats.gaps;

    // Cutting the listener is an operator's act (the superuser), not something admin SQL may do.
    const cut = await t.deps.db.query<{ cut: boolean }>(CUT);
    expect(cut.rows.length).toBeGreaterThanOrEqual(1);
    expect(cut.rows.every((r: { cut: boolean }) => r.cut)).toBe(true);

    const first = await within(inbox.next('realtime:error'), 'realtime:error');
    const second = await within(inbox.next('realtime:error'), 'a second realtime:error');
    const byChannel = new Map([first, second].map((e) => [e.channel, e]));
    expect([...byChannel.keys()].sort()).toEqual([...channels].sort());
    expect(byChannel.get('table:gap_notes')).toEqual({
      channel: 'table:gap_notes',
      code: 'CHANGES_MISSED',
      message:
        'Changes to table "gap_notes" made while the server was reconnecting to the database were not delivered: fetch the rows again.',
    });
    expect(byChannel.get(`table:gap_notes:${row.id}`)).toMatchObject({
      code: 'CHANGES_MISSED',
      message: expect.stringContaining('fetch the row again'),
    });
    expect(t.app.realtime.hub.stats.gaps).toBe(gapsBefore + 1);

    // The signal comes once LISTEN is on again: a change committed now is delivered normally.
    expect((await insert('after')).status).toBe(201);
    expect(await within(inbox.next('INSERT'), 'INSERT')).toMatchObject({
      type: 'INSERT',
      record: { body: 'after' },
      meta: { channel: 'table:gap_notes' },
    });
    await call(t, 'PATCH', `/api/database/records/gap_notes?id=eq.${row.id}`, {
      token: a.token,
      body: { body: 'edited' },
    });
    const updates = [
      await within(inbox.next('UPDATE'), 'UPDATE'),
      await within(inbox.next('UPDATE'), 'a second UPDATE'),
    ];
    expect(updates.map((u) => u.meta.channel).sort()).toEqual([...channels].sort());
    expect(updates.every((u) => u.record.body === 'edited')).toBe(true);
    // A realtime.publish() travels the same queue as the signal, so once it has arrived
    // everything before it has: one signal per table channel, none for the broadcast channel,
    // none for a socket on broadcast channels only.
    await sql(`select realtime.publish('room:1', 'ping', '{"n": 1}'::jsonb)`);
    for (const box of [inbox, inBystander])
      expect(await within(box.next('ping'), 'ping')).toMatchObject({ n: 1, meta: { channel: 'room:1' } });
    expect(inbox.all('realtime:error')).toHaveLength(2);
    expect(inBystander.all('realtime:error')).toEqual([]);
  });

  it("reaches @insforge/sdk's client.realtime.on('error') as the docs show", async () => {
    const client = createClient({ baseUrl: t.url, anonKey: t.anonKey, accessToken: a.token });
    clients.push(client);
    expect(await client.realtime.subscribe('table:gap_notes')).toMatchObject({ ok: true });
    const errors: any[] = [];
    const missed = new Promise<any>((resolve) =>
      client.realtime.on('error', (e: any) => {
        errors.push(e);
        if (e.code === 'CHANGES_MISSED') resolve(e);
      }),
    );
    await t.deps.db.query(CUT);
    expect(await within(missed, 'CHANGES_MISSED through the SDK')).toMatchObject({
      channel: 'table:gap_notes',
      code: 'CHANGES_MISSED',
      message: expect.any(String),
    });
    const inserted = new Promise<any>((resolve) => client.realtime.once('INSERT', resolve));
    await insert('after the sdk signal');
    expect(await within(inserted, 'INSERT through the SDK')).toMatchObject({
      record: { body: 'after the sdk signal' },
    });
    expect(errors).toHaveLength(1);
  });
});
