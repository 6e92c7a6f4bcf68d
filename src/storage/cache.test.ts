import { describe, expect, it } from 'vitest';
import type { Db } from '../db/types.js';
import { MAX_CACHED_BODY, objectVersion, StorageCache } from './cache.js';
import type { ObjectRow } from './metadata.js';

// The cache's bookkeeping, with the LISTEN connection played by hand: which answers may be
// kept when reads, this instance's writes and other writers' notifications interleave.

function started() {
  let hear: (payload: string) => void = () => {};
  let state: (listening: boolean) => void = () => {};
  const db = {
    listen: async (_channel: string, onPayload: (p: string) => void, onState?: (up: boolean) => void) => {
      hear = onPayload;
      state = onState ?? (() => {});
      return async () => {};
    },
  } as unknown as Db;
  const cache = new StorageCache();
  return {
    cache,
    ready: cache.start(db),
    /** A note as the trigger sends it; a string is sent as it is. */
    notify: (note: object | string) => hear(typeof note === 'string' ? note : JSON.stringify(note)),
    listening: (up: boolean) => state(up),
  };
}

const row = (etag: string, over: Partial<ObjectRow> = {}): ObjectRow => ({
  bucket: 'b',
  key: 'k',
  size: 3,
  mimeType: 'text/plain',
  etag,
  uploadedBy: null,
  uploadedAt: new Date('2026-11-24T12:00:00.123Z'),
  ...over,
});

describe('StorageCache', () => {
  it('misses and keeps nothing until it listens', () => {
    const cache = new StorageCache();
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    cache.keepBucket(cache.begin(), 'b', { name: 'b', isPublic: true });
    expect(cache.object('b', 'k')).toBeUndefined();
    expect(cache.bucket('b')).toBeUndefined();
  });

  it('keeps a read, and a missing object as null', async () => {
    const { cache, ready } = started();
    await ready;
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    cache.keepObject(cache.begin(), 'b', 'gone', null);
    expect(cache.object('b', 'k')?.etag).toBe('e1');
    expect(cache.object('b', 'gone')).toBeNull();
    expect(cache.object('b', 'other')).toBeUndefined();
  });

  it('does not keep a read overtaken by a notification of another version, but keeps the one it names', async () => {
    const { cache, ready, notify } = started();
    await ready;
    const t1 = cache.begin();
    notify({ t: 'o', b: 'b', k: 'k', v: objectVersion(row('e2')) });
    cache.keepObject(t1, 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')).toBeUndefined();
    cache.keepObject(t1, 'b', 'k', row('e2'));
    expect(cache.object('b', 'k')?.etag).toBe('e2');
  });

  it('drops a held row when another version is announced, and keeps it for its own', async () => {
    const { cache, ready, notify } = started();
    await ready;
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    notify({ t: 'o', b: 'b', k: 'k', v: objectVersion(row('e1')) });
    expect(cache.object('b', 'k')?.etag).toBe('e1');
    notify({ t: 'o', b: 'b', k: 'k', v: null });
    expect(cache.object('b', 'k')).toBeUndefined();
  });

  it('keeps a write that ran alone, and neither of two that overlapped', async () => {
    const { cache, ready } = started();
    await ready;
    const w = cache.beginWrite('b', 'k');
    cache.endWrite(w, 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')?.etag).toBe('e1');

    const w1 = cache.beginWrite('b', 'k');
    expect(cache.object('b', 'k')).toBeUndefined();
    const w2 = cache.beginWrite('b', 'k');
    // Commit order is unknown here: whichever ends last, nothing is kept.
    cache.endWrite(w2, 'b', 'k', row('e3'));
    cache.endWrite(w1, 'b', 'k', row('e2'));
    expect(cache.object('b', 'k')).toBeUndefined();

    const w3 = cache.beginWrite('b', 'k');
    cache.endWrite(w3, 'b', 'k', undefined);
    expect(cache.object('b', 'k')).toBeUndefined();
  });

  it('does not keep a read that a write of this instance overlapped', async () => {
    const { cache, ready } = started();
    await ready;
    // The read began first, the write ended before the read's answer came back.
    const r = cache.begin();
    const w = cache.beginWrite('b', 'k');
    cache.endWrite(w, 'b', 'k', row('e2'));
    cache.keepObject(r, 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')?.etag).toBe('e2');
    // A read during a write is not kept either.
    const w2 = cache.beginWrite('b', 'k');
    cache.keepObject(cache.begin(), 'b', 'k', row('e2'));
    expect(cache.object('b', 'k')).toBeUndefined();
    cache.endWrite(w2, 'b', 'k', undefined);
  });

  it('serves a body only for the version it was read for', async () => {
    const { cache, ready } = started();
    await ready;
    const w = cache.beginWrite('b', 'k');
    cache.endWrite(w, 'b', 'k', row('e1'));
    expect(cache.body(row('e1'))).toBeUndefined();
    cache.keepBody(cache.begin(), row('e1'), Buffer.from('abc'));
    expect(cache.body(row('e1'))?.toString()).toBe('abc');
    expect(cache.body(row('e2'))).toBeUndefined();
    expect(cache.body(row('e1', { uploadedAt: new Date('2026-11-24T12:00:00.124Z') }))).toBeUndefined();
    cache.keepObject(cache.begin(), 'b', 'k', row('e2'));
    expect(cache.body(row('e1'))).toBeUndefined();
    cache.keepBody(cache.begin(), row('e2', { size: MAX_CACHED_BODY + 1 }), Buffer.alloc(MAX_CACHED_BODY + 1));
    expect(cache.body(row('e2', { size: MAX_CACHED_BODY + 1 }))).toBeUndefined();
  });

  it('holds at most 16 MiB of bodies, dropping the oldest', async () => {
    const { cache, ready } = started();
    await ready;
    const n = (16 * 1024 * 1024) / MAX_CACHED_BODY + 10;
    for (let i = 0; i < n; i++)
      cache.keepBody(cache.begin(), row('e', { key: `k${i}` }), Buffer.alloc(MAX_CACHED_BODY));
    expect(cache.body(row('e', { key: 'k0' }))).toBeUndefined();
    expect(cache.body(row('e', { key: `k${n - 1}` }))).toBeDefined();
  });

  it('forgets everything when the connection drops, and misses until it listens again', async () => {
    const { cache, ready, listening } = started();
    await ready;
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    const inFlight = cache.begin();
    listening(false);
    expect(cache.object('b', 'k')).toBeUndefined();
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')).toBeUndefined();
    listening(true);
    // A read that began before the gap is not kept: a change may have gone unheard.
    cache.keepObject(inFlight, 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')).toBeUndefined();
    cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
    expect(cache.object('b', 'k')?.etag).toBe('e1');
  });

  it('forgets everything on a deleted bucket, a truncate or an unreadable note', async () => {
    const { cache, ready, notify } = started();
    await ready;
    for (const note of [{ t: 'b', b: 'b', v: null }, { t: 'all' }, 'not json']) {
      cache.keepBucket(cache.begin(), 'b', { name: 'b', isPublic: true });
      cache.keepObject(cache.begin(), 'b', 'k', row('e1'));
      notify(note);
      expect(cache.object('b', 'k')).toBeUndefined();
      expect(cache.bucket('b')).toBeUndefined();
    }
  });

  it('holds at most 10,000 object rows and 1,000 buckets, known-missing ones included', async () => {
    const { cache, ready } = started();
    await ready;
    for (let i = 0; i < 10_050; i++) cache.keepObject(cache.begin(), 'b', `missing-${i}`, null);
    for (let i = 0; i < 1_050; i++) cache.keepBucket(cache.begin(), `nope-${i}`, null);
    expect(cache.object('b', 'missing-0')).toBeUndefined();
    expect(cache.object('b', 'missing-10049')).toBeNull();
    expect(cache.bucket('nope-0')).toBeUndefined();
    expect(cache.bucket('nope-1049')).toBeNull();
  });

  it('follows a bucket made private by someone else', async () => {
    const { cache, ready, notify } = started();
    await ready;
    cache.keepBucket(cache.begin(), 'b', { name: 'b', isPublic: true });
    notify({ t: 'b', b: 'b', v: 'public' });
    expect(cache.bucket('b')?.isPublic).toBe(true);
    notify({ t: 'b', b: 'b', v: 'private' });
    expect(cache.bucket('b')).toBeUndefined();
  });
});
