// The worked example of docs/realtime.md, as written there: a chat whose rooms, messages and
// channels are guarded by RLS.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { backends } from '../helpers/db.js';
import { createTestUser, startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, Inbox, subscribe } from '../helpers/realtime.js';

/** The SQL block of the worked example, one statement at a time. */
function exampleSql(): string[] {
  const doc = readFileSync(new URL('../../docs/realtime.md', import.meta.url), 'utf8');
  const example = doc.slice(doc.indexOf('## A worked example'));
  const block = /```sql\n([\s\S]*?)```/.exec(example)![1]!;
  return block
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean);
}

describe.each(backends())('the chat example of docs/realtime.md (%s)', (backend) => {
  let t: TestApp;
  const open: Socket[] = [];
  const sql = async (query: string, params: unknown[] = []) => {
    const r = await call(t, 'POST', '/api/database/sql', {
      headers: { 'x-api-key': t.adminKey },
      body: { query, params },
    });
    expect(r.status, `${query}: ${r.text}`).toBe(200);
    return r.body.rows;
  };

  beforeAll(async () => {
    t = await startApp(backend);
    for (const statement of exampleSql()) await sql(statement);
    expect(
      (await call(t, 'POST', '/api/database/tables/messages/realtime', { headers: { 'x-api-key': t.adminKey } }))
        .status,
    ).toBe(200);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t?.close();
  });

  it('delivers messages and opens chat channels to room members only', async () => {
    const [a, b, c] = [await createTestUser(t), await createTestUser(t), await createTestUser(t)];
    const [r1] = await sql(`insert into public.rooms (name) values ('one') returning id`);
    const [r2] = await sql(`insert into public.rooms (name) values ('two') returning id`);
    await sql(`insert into public.members (room, user_id) values ($1, $2), ($1, $3), ($4, $5)`, [
      r1.id,
      a.userId,
      b.userId,
      r2.id,
      c.userId,
    ]);
    const sa = await connectSocket(t.url, a.token);
    const sc = await connectSocket(t.url, c.token);
    open.push(sa, sc);
    const [inA, inC] = [new Inbox(sa), new Inbox(sc)];
    for (const s of [sa, sc]) expect((await subscribe(s, 'table:messages')).ok).toBe(true);

    const post = (token: string, room: string, body: string) =>
      call(t, 'POST', '/api/database/records/messages', { token, body: [{ room, body }] });
    expect((await post(b.token, r1.id, 'hello room one')).status).toBe(201);
    expect(await inA.next('INSERT')).toMatchObject({
      record: { room: r1.id, author: b.userId, body: 'hello room one' },
    });
    expect((await post(c.token, r2.id, 'hello room two')).status).toBe(201);
    expect((await inC.next('INSERT')).record.body).toBe('hello room two');
    expect(inC.all('INSERT')).toHaveLength(1);
    expect((await post(b.token, r2.id, 'not my room')).status).toBe(403);

    expect((await subscribe(sa, `chat:${r1.id}`)).ok).toBe(true);
    expect(await subscribe(sc, `chat:${r1.id}`)).toMatchObject({ ok: false, error: { code: 'SUBSCRIBE_DENIED' } });
    sa.emit('realtime:publish', { channel: `chat:${r1.id}`, event: 'typing', payload: { on: true } });
    expect(await inA.next('typing')).toMatchObject({ on: true, meta: { senderId: a.userId } });
  });
});
