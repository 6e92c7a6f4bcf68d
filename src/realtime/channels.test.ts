import { describe, expect, it } from 'vitest';
import { parseChannel } from './channels.js';
import { jsonSize, TokenBucket } from './limits.js';
import { changeChannels, type ChangeNote } from './notes.js';

describe('parseChannel', () => {
  it('reads table channels and broadcast channels', () => {
    expect(parseChannel('table:notes')).toEqual({ kind: 'table', name: 'table:notes', table: 'notes', key: null });
    expect(parseChannel('table:notes:42')).toEqual({
      kind: 'table',
      name: 'table:notes:42',
      table: 'notes',
      key: '42',
    });
    expect(parseChannel('table:notes:a:b')).toMatchObject({ table: 'notes', key: 'a:b' });
    expect(parseChannel('chat:1')).toEqual({ kind: 'broadcast', name: 'chat:1' });
  });

  it('refuses what is not a channel name', () => {
    for (const bad of [
      '',
      'a b',
      'x'.repeat(256),
      'table:',
      'table:1abc',
      'table:no-dash',
      'table:t:',
      'é',
      5,
      null,
      undefined,
      {},
    ]) {
      expect(parseChannel(bad)).toBeNull();
    }
  });
});

describe('TokenBucket', () => {
  it('allows a second worth of events at once, then refills with time', () => {
    let now = 0;
    const b = new TokenBucket(3, () => now);
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
    now += 400; // 1.2 tokens
    expect([b.take(), b.take()]).toEqual([true, false]);
    now += 10_000; // capped at one second's worth
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
  });
});

describe('jsonSize', () => {
  it('measures the JSON bytes, Infinity for what cannot be sent', () => {
    expect(jsonSize({ a: 'é' })).toBe(Buffer.byteLength('{"a":"é"}'));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonSize(cyclic)).toBe(Infinity);
  });
});

describe('changeChannels', () => {
  const note = (over: Partial<ChangeNote>): ChangeNote => ({
    k: 'change',
    table: 't',
    op: 'UPDATE',
    pk: 'id',
    new: { id: 2 },
    old: { id: 1 },
    id: 'x',
    at: '',
    ...over,
  });
  it('names the table channel and the row channels of the old and new key', () => {
    expect(changeChannels(note({}))).toEqual(['table:t', 'table:t:2', 'table:t:1']);
    expect(changeChannels(note({ old: { id: 2 } }))).toEqual(['table:t', 'table:t:2']);
    expect(changeChannels(note({ pk: null }))).toEqual(['table:t']);
    expect(changeChannels(note({ op: 'DELETE', new: null }))).toEqual(['table:t', 'table:t:1']);
  });
});
