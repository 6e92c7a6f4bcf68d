// Database changes over realtime: RLS-exact delivery per subscriber (insert, an update that
// moves a row between users, delete), the admin switch and the schema flag, large rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';

describe.each(backends())('realtime database changes (%s)', (backend) => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof createTestUser>>;
  let b: Awaited<ReturnType<typeof createTestUser>>;
  const sockets: Socket[] = [];
  let inA: Inbox;
  let inB: Inbox;
  let inAdmin: Inbox;
  const admin = () => ({ 'x-api-key': t.adminKey });
  const insertAs = (token: string, rows: object[]) =>
    call(t, 'POST', '/api/database/records/notes', { token, body: rows, headers: { prefer: 'return=representation' } });

  beforeAll(async () => {
    t = await startApp(backend);
    a = await createTestUser(t);
    b = await createTestUser(t);
    const created = await call(t, 'POST', '/api/database/tables', {
      headers: admin(),
      body: {
        tableName: 'notes',
        rlsEnabled: true,
        columns: [
          { name: 'owner', type: 'uuid', nullable: false },
          { name: 'body', type: 'string', nullable: true },
        ],
      },
    });
    expect(created.status).toBe(201);
    const policy = await call(t, 'POST', '/api/database/sql', {
      headers: admin(),
      body: {
        query:
          'create policy own on public.notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())',
      },
    });
    expect(policy.status).toBe(200);
    for (const token of [a.token, b.token, t.adminKey]) {
      const s = await connectSocket(t.url, token);
      sockets.push(s);
    }
    [inA, inB, inAdmin] = sockets.map((s) => new Inbox(s)) as [Inbox, Inbox, Inbox];
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await t?.close();
  });

  it('refuses table channels until an admin turns realtime on, and the schema reports it', async () => {
    const before = await subscribe(sockets[0]!, 'table:notes');
    expect(before).toMatchObject({ ok: false, channel: 'table:notes', error: { code: 'CHANNEL_NOT_FOUND' } });
    expect((await call(t, 'GET', '/api/database/tables/notes/schema', { headers: admin() })).body.realtime).toBe(false);
    const on = await call(t, 'POST', '/api/database/tables/notes/realtime', { headers: admin() });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({
      tableName: 'notes',
      realtime: true,
      channels: ['table:notes', 'table:notes:<id>'],
    });
    expect((await call(t, 'GET', '/api/database/tables/notes/schema', { headers: admin() })).body.realtime).toBe(true);
    expect((await call(t, 'POST', '/api/database/tables/nope/realtime', { headers: admin() })).status).toBe(404);
    expect((await call(t, 'POST', '/api/database/tables/notes/realtime', { token: a.token })).status).toBe(403);
    for (const s of sockets)
      expect(await subscribe(s, 'table:notes')).toMatchObject({ ok: true, channel: 'table:notes' });
  });

  it('delivers an insert only to the subscribers whose policies let them see the row', async () => {
    const r = await insertAs(a.token, [{ owner: a.userId, body: 'from a' }]);
    expect(r.status).toBe(201);
    const gotA = await inA.next('INSERT');
    expect(gotA).toMatchObject({
      type: 'INSERT',
      table: 'notes',
      record: { owner: a.userId, body: 'from a' },
      old_record: null,
    });
    expect(gotA.meta).toMatchObject({ channel: 'table:notes', senderType: 'system' });
    expect(typeof gotA.meta.messageId).toBe('string');
    expect((await inAdmin.next('INSERT')).record.body).toBe('from a');
    // B's first event is B's own row: A's row never reached B (one queue, in commit order).
    await insertAs(b.token, [{ owner: b.userId, body: 'from b' }]);
    expect((await inB.next('INSERT')).record.body).toBe('from b');
    await inAdmin.next('INSERT');
    // The admin saw B's row, so the change was handled; A never got it.
    expect(inA.all('INSERT').map((e) => e.body.record.body)).toEqual(['from a']);
  });

  it('an update that moves a row from A to B: A gets a delete-like event, B an update without the old image', async () => {
    const [row] = (await insertAs(a.token, [{ owner: a.userId, body: 'moving' }])).body;
    await inA.next('INSERT');
    await inAdmin.next('INSERT');
    // The policy's WITH CHECK keeps A from giving rows away: the admin moves it.
    const moved = await call(t, 'PATCH', `/api/database/records/notes?id=eq.${row.id}`, {
      headers: admin(),
      body: { owner: b.userId },
    });
    expect(moved.status).toBeLessThan(300);
    const left = await inA.next('DELETE');
    expect(left).toMatchObject({
      type: 'DELETE',
      reason: 'not_visible',
      record: null,
      old_record: { id: row.id, owner: a.userId },
    });
    const arrived = await inB.next('UPDATE');
    expect(arrived).toMatchObject({ type: 'UPDATE', record: { id: row.id, owner: b.userId }, old_record: null });
    expect(await inAdmin.next('UPDATE')).toMatchObject({
      record: { owner: b.userId },
      old_record: { owner: a.userId },
    });
    expect(inA.all('UPDATE')).toEqual([]);
  });

  it('delivers a delete only to those who could see the deleted row', async () => {
    const [row] = (await insertAs(b.token, [{ owner: b.userId, body: 'to delete' }])).body;
    await inB.next('INSERT');
    await inAdmin.next('INSERT');
    expect((await call(t, 'DELETE', `/api/database/records/notes?id=eq.${row.id}`, { token: b.token })).status).toBe(
      204,
    );
    expect(await inB.next('DELETE')).toMatchObject({ type: 'DELETE', old_record: { id: row.id, body: 'to delete' } });
    await inAdmin.next('DELETE');
    // A marker row of A: A's next event is it, not B's delete.
    await insertAs(a.token, [{ owner: a.userId, body: 'marker' }]);
    expect((await inA.next('INSERT')).record.body).toBe('marker');
    expect(inA.all('DELETE').map((e) => e.body.reason)).toEqual(['not_visible']);
  });

  it('publishes one row on table:<t>:<id> and carries rows over the NOTIFY size limit', async () => {
    const big = 'x'.repeat(20_000);
    const [row] = (await insertAs(a.token, [{ owner: a.userId, body: 'small' }])).body;
    await inA.next('INSERT');
    const one = await connectSocket(t.url, a.token);
    try {
      const inOne = new Inbox(one);
      expect(await subscribe(one, `table:notes:${row.id}`)).toMatchObject({ ok: true });
      expect(await subscribe(one, 'table:notes:')).toMatchObject({ ok: false, error: { code: 'INVALID_CHANNEL' } });
      await call(t, 'PATCH', `/api/database/records/notes?id=eq.${row.id}`, { token: a.token, body: { body: big } });
      const got = await inOne.next('UPDATE');
      expect(got.meta.channel).toBe(`table:notes:${row.id}`);
      expect(got.record.body).toHaveLength(20_000);
      expect((await inA.next('UPDATE')).record.body).toHaveLength(20_000);
    } finally {
      one.close();
    }
  });

  it('checks each user with their own claims under once-per-statement policies, and a policy change holds for the next change', async () => {
    const sql = (query: string) => call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } });
    const mine = ['a only', 'b only', 'shared', 'b marker'];
    const bodies = (inbox: Inbox) =>
      inbox
        .all('INSERT')
        .map((e) => e.body.record.body)
        .filter((x) => mine.includes(x));
    // `(select auth.uid())` is evaluated once per statement: each user's check must be its own.
    expect((await sql('alter policy own on public.notes using (owner = (select auth.uid()))')).status).toBe(200);
    await insertAs(a.token, [{ owner: a.userId, body: 'a only' }]);
    await insertAs(b.token, [{ owner: b.userId, body: 'b only' }]);
    expect((await inA.next('INSERT')).record.body).toBe('a only');
    expect((await inB.next('INSERT')).record.body).toBe('b only');
    const shared = "create policy shared on public.notes for select to authenticated using (body = 'shared')";
    expect((await sql(shared)).status).toBe(200);
    await insertAs(a.token, [{ owner: a.userId, body: 'shared' }]);
    expect((await inB.next('INSERT')).record).toMatchObject({ owner: a.userId, body: 'shared' });
    expect((await inA.next('INSERT')).record.body).toBe('shared');
    expect((await sql('drop policy shared on public.notes')).status).toBe(200);
    await insertAs(a.token, [{ owner: a.userId, body: 'shared' }]);
    await insertAs(b.token, [{ owner: b.userId, body: 'b marker' }]);
    expect((await inA.next('INSERT')).record.body).toBe('shared');
    expect((await inB.next('INSERT')).record.body).toBe('b marker');
    expect(bodies(inB)).toEqual(['b only', 'shared', 'b marker']);
    expect(bodies(inA)).toEqual(['a only', 'shared', 'shared']);
  });

  it('stops publishing when an admin turns realtime off', async () => {
    const off = await call(t, 'DELETE', '/api/database/tables/notes/realtime', { headers: admin() });
    expect(off.body).toMatchObject({ realtime: false });
    expect((await call(t, 'GET', '/api/database/tables/notes/schema', { headers: admin() })).body.realtime).toBe(false);
    const s = await connectSocket(t.url, a.token);
    expect(await subscribe(s, 'table:notes')).toMatchObject({ ok: false, error: { code: 'CHANNEL_NOT_FOUND' } });
    s.close();
  });
});
