// Per-connection limits: subscriptions, events a second, payload size, oversized frames, and a
// slow consumer whose outgoing buffer passes the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { backends } from '../helpers/db.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { connectSocket, disconnected, Inbox, subscribe } from '../helpers/realtime.js';

describe.each(backends())('realtime limits (%s)', (backend) => {
  let t: TestApp;
  const open: Socket[] = [];
  const connect = async () => {
    const s = await connectSocket(t.url, t.adminKey);
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    t = await startApp(backend, {
      REALTIME_MAX_SUBSCRIPTIONS: '2',
      REALTIME_MESSAGES_PER_SECOND: '5',
      REALTIME_MAX_PAYLOAD_BYTES: '1024',
      REALTIME_MAX_BUFFER_BYTES: '65536',
    });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t?.close();
  });

  it('caps the subscriptions of one connection', async () => {
    const s = await connect();
    expect((await subscribe(s, 'room:1')).ok).toBe(true);
    expect((await subscribe(s, 'room:2')).ok).toBe(true);
    expect(await subscribe(s, 'room:3')).toMatchObject({
      ok: false,
      channel: 'room:3',
      error: { code: 'TOO_MANY_SUBSCRIPTIONS' },
    });
    s.emit('realtime:unsubscribe', { channel: 'room:1' });
    expect((await subscribe(s, 'room:3')).ok).toBe(true);
  });

  it('drops events over the rate with RATE_LIMITED', async () => {
    const s = await connect();
    const inbox = new Inbox(s);
    expect((await subscribe(s, 'room:rate')).ok).toBe(true);
    for (let i = 0; i < 30; i++) s.emit('realtime:publish', { channel: 'room:rate', event: 'tick', payload: { i } });
    await inbox.count(['tick', 'realtime:error'], 30);
    const limited = inbox.all('realtime:error').filter((e) => e.body.code === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThan(0);
    expect(inbox.all('tick').length).toBeLessThan(30);
    expect(inbox.all('tick').length + limited.length).toBe(30);
  });

  it('refuses payloads over the limit and closes a connection that sends an oversized frame', async () => {
    const s = await connect();
    const inbox = new Inbox(s);
    expect((await subscribe(s, 'room:big')).ok).toBe(true);
    s.emit('realtime:publish', { channel: 'room:big', event: 'big', payload: { text: 'x'.repeat(2000) } });
    expect(await inbox.next('realtime:error')).toMatchObject({ channel: 'room:big', code: 'PAYLOAD_TOO_LARGE' });
    expect(s.connected).toBe(true);
    const gone = disconnected(s);
    s.emit('realtime:publish', { channel: 'room:big', event: 'big', payload: { text: 'x'.repeat(200_000) } });
    expect(await gone).toBe('transport close');
  });

  it('closes a slow consumer once its outgoing buffer passes the limit, and goes on serving others', async () => {
    const slow = await connect();
    const fast = await connect();
    expect((await subscribe(slow, 'room:slow')).ok).toBe(true);
    // Stop reading on the client side: what the server sends piles up in its buffers.
    (slow.io.engine.transport as any).ws._socket.pause();
    const before = t.app.realtime.stats.slowConsumers;
    const r = await call(t, 'POST', '/api/database/sql', {
      headers: { 'x-api-key': t.adminKey },
      body: {
        query: `select realtime.publish('room:slow', 'blob', jsonb_build_object('x', repeat('x', 7000), 'i', g)) from generate_series(1, 2000) g`,
      },
    });
    expect(r.status).toBe(200);
    while (t.app.realtime.stats.slowConsumers === before) await new Promise((res) => setTimeout(res, 20));
    expect(t.app.realtime.stats.slowConsumers).toBe(before + 1);
    const inbox = new Inbox(fast);
    expect((await subscribe(fast, 'room:after')).ok).toBe(true);
    await call(t, 'POST', '/api/database/sql', {
      headers: { 'x-api-key': t.adminKey },
      body: { query: `select realtime.publish('room:after', 'ping', '{}')` },
    });
    expect(await inbox.next('ping')).toMatchObject({ meta: { channel: 'room:after' } });
    expect(fast.connected).toBe(true);
  });
});
