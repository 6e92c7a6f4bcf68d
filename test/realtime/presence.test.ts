// Presence (issue 25): only on channels that ask for it, and then only what the viewer's
// policies on realtime.messages allow; table channels never reveal who else is subscribed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';

const SETUP = [
  `insert into realtime.channels (pattern, presence) values ('team:%', true)`,
  `insert into realtime.channels (pattern) values ('quiet:%')`,
  // Everyone reads team and quiet channels; a member's presence shows on team:open only
  // (elsewhere each sees only themselves).
  `create policy team_read on realtime.messages for select to authenticated
     using ((channel like 'team:%' or channel like 'quiet:%')
       and (coalesce(event, '') <> 'presence' or sender_id = auth.uid() or channel = 'team:open'))`,
];

const settle = () => new Promise((r) => setTimeout(r, 300));

describe.each(backends())('realtime presence (%s)', (backend) => {
  let t: TestApp;
  const open: Socket[] = [];
  const admin = () => ({ 'x-api-key': t.adminKey });
  const pair = async () => {
    const [a, b] = [await createTestUser(t), await createTestUser(t)];
    const [sa, sb] = [await connectSocket(t.url, a.token), await connectSocket(t.url, b.token)];
    open.push(sa, sb);
    return { a, b, sa, sb, inA: new Inbox(sa), inB: new Inbox(sb) };
  };

  beforeAll(async () => {
    t = await startApp(backend);
    for (const query of SETUP)
      expect((await call(t, 'POST', '/api/database/sql', { headers: admin(), body: { query } })).status).toBe(200);
    const todos = await call(t, 'POST', '/api/database/tables', {
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
    expect(todos.status).toBe(201);
    await call(t, 'POST', '/api/database/sql', {
      headers: admin(),
      body: { query: 'create policy own on public.todos for all to authenticated using (owner = auth.uid())' },
    });
    expect((await call(t, 'POST', '/api/database/tables/todos/realtime', { headers: admin() })).status).toBe(200);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t?.close();
  });

  it("a table channel never lists or announces the other subscribers (RLS hides the first user's rows)", async () => {
    const { a, b, sa, sb, inA } = await pair();
    await call(t, 'POST', '/api/database/records/todos', {
      token: a.token,
      body: [{ owner: a.userId, title: 'private' }],
    });
    const ackA = await subscribe(sa, 'table:todos');
    expect(ackA).toMatchObject({ ok: true, channel: 'table:todos' });
    const ackB = await subscribe(sb, 'table:todos');
    expect(ackB.ok).toBe(true);
    expect(ackB.presence.members.map((m: any) => m.userId)).toEqual([b.userId]);
    expect(JSON.stringify(ackB)).not.toContain(a.userId);
    sb.emit('realtime:unsubscribe', { channel: 'table:todos' });
    await settle();
    expect(inA.all('presence:join', 'presence:leave')).toEqual([]);
  });

  it('a channel without presence lists only the caller and announces nobody', async () => {
    const { a, b, sa, sb, inA } = await pair();
    expect((await subscribe(sa, 'quiet:1')).presence.members.map((m: any) => m.userId)).toEqual([a.userId]);
    expect((await subscribe(sb, 'quiet:1')).presence.members.map((m: any) => m.userId)).toEqual([b.userId]);
    await settle();
    expect(inA.all('presence:join')).toEqual([]);
  });

  it("on a presence channel, members show only where the viewer's policies allow", async () => {
    const { a, b, sa, sb, inA, inB } = await pair();
    // team:private: the policy shows each only themselves.
    await subscribe(sa, 'team:private');
    const hidden = await subscribe(sb, 'team:private');
    expect(hidden.presence.members.map((m: any) => m.userId)).toEqual([b.userId]);
    // team:open: both see each other, with join and leave.
    await subscribe(sa, 'team:open');
    const shown = await subscribe(sb, 'team:open');
    expect(shown.presence.members.map((m: any) => m.userId).sort()).toEqual([a.userId, b.userId].sort());
    expect((await inA.next('presence:join')).member).toMatchObject({ userId: b.userId, type: 'user' });
    sb.emit('realtime:unsubscribe', { channel: 'team:open' });
    expect(await inA.next('presence:leave')).toMatchObject({
      meta: { channel: 'team:open' },
      member: { userId: b.userId },
    });
    sb.emit('realtime:unsubscribe', { channel: 'team:private' });
    await settle();
    const seen = inA.all('presence:join', 'presence:leave').map((e) => e.body.meta.channel);
    expect(seen).toEqual(['team:open', 'team:open']);
    expect(inB.all('presence:join', 'presence:leave')).toEqual([]);
  });

  it('admins see every member of a presence channel', async () => {
    const { a, sa } = await pair();
    await subscribe(sa, 'team:private');
    const s = await connectSocket(t.url, t.adminKey);
    open.push(s);
    const ack = await subscribe(s, 'team:private');
    expect(ack.presence.members.map((m: any) => m.userId)).toContain(a.userId);
  });
});
