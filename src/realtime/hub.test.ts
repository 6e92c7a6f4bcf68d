import { describe, expect, it } from 'vitest';
import type { Db } from '../db/types.js';
import { RealtimeHub, type LocalSockets } from './hub.js';

// When the hub cannot deliver changes (its LISTEN connection dropped, or its queue is full),
// the local subscribers of table channels are told once, after everything queued before.
// The LISTEN connection is played by hand; test/realtime/gap.test.ts does it for real.

function hubWithSockets(channels: string[]) {
  let hear: (payload: string) => void = () => {};
  let state: (listening: boolean) => void = () => {};
  const db = {
    listen: async (_c: string, onPayload: (p: string) => void, onState?: (up: boolean) => void) => {
      hear = onPayload;
      state = onState ?? (() => {});
      return async () => {};
    },
  } as unknown as Db;
  const sent: Array<{ channel: string; event: string; body: { code?: string; message?: string } }> = [];
  const sockets: LocalSockets = {
    members: () => [],
    send: () => {},
    sendChannel: (channel, event, body) => void sent.push({ channel, event, body }),
    endSession: () => {},
    channels: () => channels,
  };
  const hub = new RealtimeHub(db, db, sockets);
  const message = (i: number) =>
    JSON.stringify({
      k: 'msg',
      channel: 'room:1',
      event: 'e',
      payload: { i },
      id: `m${i}`,
      at: new Date().toISOString(),
    });
  return { hub, sent, hear: (i: number) => hear(message(i)), listening: (up: boolean) => state(up) };
}

describe('RealtimeHub: missed changes', () => {
  it('signals once, behind the queue, when notifications are dropped past its 10,000', async () => {
    const { hub, sent, hear } = hubWithSockets(['table:todos', 'table:todos:7', 'room:1']);
    await hub.start();
    for (let i = 0; i < 10_005; i++) hear(i);
    await hub.stop();
    expect(hub.stats.dropped).toBe(5);
    expect(hub.stats.gaps).toBe(1);
    const errors = sent.filter((s) => s.event === 'realtime:error');
    expect(errors.map((e) => e.channel)).toEqual(['table:todos', 'table:todos:7']);
    expect(errors[0]!.body).toMatchObject({ code: 'CHANGES_MISSED', message: expect.stringContaining('too busy') });
    expect(errors[1]!.body.message).toContain('fetch the row again');
    // After the 10,000 queued messages, none of the dropped ones.
    expect(sent.findIndex((s) => s.event === 'realtime:error')).toBe(10_000);
  });

  it('signals once after a reconnection, however many drops came before it', async () => {
    const { hub, sent, listening } = hubWithSockets(['table:todos']);
    await hub.start();
    listening(true); // a first connect is no gap
    listening(false);
    listening(true);
    listening(false);
    listening(true);
    await hub.stop();
    const errors = sent.filter((s) => s.event === 'realtime:error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.body.message).toContain('reconnecting to the database');
  });
});
