// The storage cache (src/storage/cache.ts) answers hot reads from memory on the embedded
// database. Every change made around the API must still be seen by the next read: SQL run by
// an admin, a bucket made private, a truncate, a LISTEN connection that dropped, and many
// writes to one key at once. Run on server Postgres too, where there is no cache: the same
// answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/db.js';
import { until } from '../helpers/until.js';
import { startStorageApp, type StorageTestApp } from './helpers.js';

describe.each(backends())('storage cache (%s)', (backend) => {
  let t: StorageTestApp;
  const sql = (query: string) => t.json('POST', '/api/database/sql', { query });
  const get = (key: string, headers: Record<string, string> = {}) =>
    t.fetch(`/api/storage/buckets/pub/objects/${key}`, { headers });
  const put = (key: string, data: string) =>
    t.fetch(`/api/storage/buckets/pub/objects/${key}`, {
      method: 'PUT',
      headers: { ...t.admin, 'content-type': 'text/plain' },
      body: data,
    });

  beforeAll(async () => {
    t = await startStorageApp(backend, 'local');
    await t.createBucket('pub', true);
  });
  afterAll(async () => t?.close());

  it('is live on the embedded database only', () => {
    expect(t.deps.storage.cache.object('pub', 'none')).toBeUndefined();
    const w = t.deps.storage.cache.beginWrite('pub', 'probe');
    t.deps.storage.cache.endWrite(w, 'pub', 'probe', null);
    expect(t.deps.storage.cache.object('pub', 'probe')).toBe(backend === 'embedded' ? null : undefined);
  });

  it('serves what was just written, and the bytes it was written with', async () => {
    for (const body of ['one', 'two', 'three']) {
      expect((await put('rw.txt', body)).status).toBe(200);
      const r = await get('rw.txt');
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(body);
    }
    const partial = await get('rw.txt', { range: 'bytes=1-3' });
    expect(partial.status).toBe(206);
    expect(partial.headers.get('content-range')).toBe('bytes 1-3/5');
    expect(await partial.text()).toBe('hre');
    const etag = (await get('rw.txt')).headers.get('etag')!;
    expect((await get('rw.txt', { 'if-none-match': etag })).status).toBe(304);
    expect(
      (await t.fetch('/api/storage/buckets/pub/objects/rw.txt', { method: 'HEAD' })).headers.get('content-length'),
    ).toBe('5');
    expect((await get('rw.txt', { range: 'bytes=9-' })).status).toBe(416);
    expect(
      (await t.fetch('/api/storage/buckets/pub/objects/rw.txt', { method: 'DELETE', headers: t.admin })).status,
    ).toBe(200);
    expect((await get('rw.txt')).status).toBe(404);
  });

  it("announces other writers' changes on plinth_storage, and not the API's own writes", async () => {
    const heard: string[] = [];
    const unlisten = await t.deps.db.listen('plinth_storage', (p) => heard.push(p));
    try {
      await put('quiet.txt', 'one');
      await t.fetch('/api/storage/buckets/pub/objects/quiet.txt', { method: 'DELETE', headers: t.admin });
      await put('quiet.txt', 'two');
      await sql(`update storage.objects set mime_type = 'text/csv' where bucket = 'pub' and key = 'quiet.txt'`);
      await until(async () => heard.length > 0, 3000, 'a notification');
      // Only the update by SQL, with the row's new version.
      expect(heard.map((p) => JSON.parse(p))).toEqual([
        { t: 'o', b: 'pub', k: 'quiet.txt', v: expect.stringContaining('|text/csv|') },
      ]);
    } finally {
      await unlisten();
    }
  });

  it('sees a row changed, deleted or truncated by SQL', async () => {
    await put('sql.txt', 'hello');
    expect((await get('sql.txt')).headers.get('content-type')).toBe('text/plain');
    expect(
      (await sql(`update storage.objects set mime_type = 'text/csv' where bucket = 'pub' and key = 'sql.txt'`)).status,
    ).toBe(200);
    await until(
      async () => (await get('sql.txt')).headers.get('content-type') === 'text/csv',
      3000,
      'the type changed by SQL',
    );

    expect((await sql(`delete from storage.objects where bucket = 'pub' and key = 'sql.txt'`)).status).toBe(200);
    await until(async () => (await get('sql.txt')).status === 404, 3000, 'the row deleted by SQL');

    await put('sql.txt', 'again');
    expect((await get('sql.txt')).status).toBe(200);
    expect((await sql('truncate storage.objects')).status).toBe(200);
    await until(async () => (await get('sql.txt')).status === 404, 3000, 'the truncate');
  });

  it('sees a bucket made private by SQL, and one deleted and made again', async () => {
    await put('vis.txt', 'hello');
    expect((await get('vis.txt')).status).toBe(200);
    await sql(`update storage.buckets set is_public = false where name = 'pub'`);
    await until(async () => (await get('vis.txt')).status === 401, 3000, 'the bucket made private');
    await sql(`update storage.buckets set is_public = true where name = 'pub'`);
    await until(async () => (await get('vis.txt')).status === 200, 3000, 'the bucket made public again');

    await t.createBucket('again', true);
    const url = '/api/storage/buckets/again/objects/x.txt';
    await t.fetch(url, { method: 'PUT', headers: { ...t.admin, 'content-type': 'text/plain' }, body: 'old' });
    expect(await (await t.fetch(url)).text()).toBe('old');
    expect((await t.fetch('/api/storage/buckets/again', { method: 'DELETE', headers: t.admin })).status).toBe(200);
    await t.createBucket('again', true);
    expect((await t.fetch(url)).status).toBe(404);
  });

  it('keeps answering right after its LISTEN connection is cut', async () => {
    await put('cut.txt', 'before');
    expect(await (await get('cut.txt')).text()).toBe('before');
    // Cut the listener, change the row while it is down, then wait for it to come back.
    // As the operator (the superuser): admin SQL may not end Plinth's own connections.
    const cut = await t.deps.db.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'plinth-listen' and datname = current_database()`,
    );
    expect(cut.rows.length).toBeGreaterThanOrEqual(1);
    await sql(`update storage.objects set mime_type = 'text/markdown' where bucket = 'pub' and key = 'cut.txt'`);
    await until(
      async () => (await get('cut.txt')).headers.get('content-type') === 'text/markdown',
      3000,
      'the change made while the listener was down',
    );
    // Once listening again, a later change is heard too.
    await until(
      async () => {
        const r = await sql(
          `select count(*)::int as n from pg_stat_activity where application_name = 'plinth-listen' and datname = current_database()`,
        );
        return ((await r.json()) as { rows: Array<{ n: number }> }).rows[0]!.n === 1;
      },
      3000,
      'the listener to connect again',
    );
    await get('cut.txt');
    await sql(`update storage.objects set mime_type = 'text/html' where bucket = 'pub' and key = 'cut.txt'`);
    await until(
      async () => (await get('cut.txt')).headers.get('content-type') === 'text/html',
      3000,
      'a change after the listener came back',
    );
  });

  it('ends many concurrent writes to one key on the row and the bytes of the last', async () => {
    const bodies = Array.from({ length: 24 }, (_, i) => `body-${i}-${'x'.repeat(i * 100)}`);
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(bodies.map((b) => put('race.txt', b)));
      expect(answers.every((r) => r.status === 200)).toBe(true);
      const r = await get('race.txt');
      const text = await r.text();
      const answer = (await (
        await sql(`select etag, size::int from storage.objects where bucket = 'pub' and key = 'race.txt'`)
      ).json()) as { rows: Array<{ etag: string; size: number }> };
      const row = answer.rows[0]!;
      expect(r.headers.get('etag')).toBe(`"${row.etag}"`);
      expect(text.length).toBe(row.size);
      expect(bodies).toContain(text);
    }
  });
});
