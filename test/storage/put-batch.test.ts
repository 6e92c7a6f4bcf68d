// Concurrent object writes share one metadata statement (src/storage/object-rows.ts): each
// write still lands with its own uploader, a write that fails fails alone, and none leaves a
// file without its row or a row without its file. Both database backends, the local driver
// (and S3 for the HTTP case).
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Identity } from '../../src/auth/identity.js';
import { createTestUser } from '../helpers/app.js';
import { backends } from '../helpers/db.js';
import { encodeKey, startStorageApp, type DriverKind, type StorageTestApp } from './helpers.js';

const cases = backends().flatMap((b) => (['local', 's3'] as DriverKind[]).map((d) => [b, d] as const));

describe.each(cases)('object rows written together (%s, %s driver)', (backend, driver) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp(backend, driver);
    await t.createBucket('batch');
  });
  afterAll(async () => t?.close());

  const rowsOf = async (prefix: string) =>
    (
      await t.deps.db.query<{ key: string; uploadedBy: string | null; size: number }>(
        `select key, uploaded_by::text as "uploadedBy", size::float8 as size from storage.objects
         where bucket = 'batch' and starts_with(key, $1) order by key`,
        [prefix],
      )
    ).rows;
  const put = (key: string, body: string, headers: Record<string, string>) =>
    t.fetch(`/api/storage/buckets/batch/objects/${encodeKey(key)}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      body,
    });

  it('concurrent PUTs of different users each land with their own uploader, fewer statements than rows', async () => {
    const users = await Promise.all([createTestUser(t), createTestUser(t), createTestUser(t)]);
    const sent = { ...t.deps.storage.rows.sent };
    const writes = users.flatMap((u, i) =>
      [0, 1, 2, 3, 4, 5].map((n) => ({ key: `users/${i}-${n}.bin`, body: `${i}:${n}`.repeat(n + 1), user: u })),
    );
    const answers = await Promise.all(writes.map((w) => put(w.key, w.body, w.user.auth)));
    expect(answers.map((r) => r.status)).toEqual(writes.map(() => 200));
    const rows = await rowsOf('users/');
    expect(rows).toEqual(
      [...writes]
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((w) => ({ key: w.key, uploadedBy: w.user.userId, size: w.body.length })),
    );
    for (const w of writes) {
      const r = await t.fetch(`/api/storage/buckets/batch/objects/${encodeKey(w.key)}`, { headers: w.user.auth });
      expect(await r.text()).toBe(w.body);
    }
    // An admin replacing a user's object keeps its uploader, in a batch too.
    const replaced = await Promise.all(writes.slice(0, 6).map((w) => put(w.key, 'admin', t.admin)));
    expect(replaced.map((r) => r.status)).toEqual(replaced.map(() => 200));
    expect((await rowsOf('users/0-')).map((r) => r.uploadedBy)).toEqual(writes.slice(0, 6).map(() => users[0]!.userId));
    const now = t.deps.storage.rows.sent;
    expect(now.rows - sent.rows).toBe(writes.length + 6);
    if (backend === 'embedded' && driver === 'local')
      expect(now.statements - sent.statements).toBeLessThan(now.rows - sent.rows);
  });

  it('a PUT refused by the owner check fails alone; the others in flight land', async () => {
    const [a, b] = await Promise.all([createTestUser(t), createTestUser(t)]);
    expect((await put('owned/a.bin', 'mine', a.auth)).status).toBe(200);
    const answers = await Promise.all([
      put('owned/a.bin', 'stolen', b.auth),
      ...[0, 1, 2, 3, 4].map((n) => put(`owned/b-${n}.bin`, `b${n}`, b.auth)),
    ]);
    expect(answers.map((r) => r.status)).toEqual([403, 200, 200, 200, 200, 200]);
    expect(await rowsOf('owned/')).toEqual([
      { key: 'owned/a.bin', uploadedBy: a.userId, size: 4 },
      ...[0, 1, 2, 3, 4].map((n) => ({ key: `owned/b-${n}.bin`, uploadedBy: b.userId, size: 2 })),
    ]);
    expect(await (await t.fetch('/api/storage/buckets/batch/objects/owned/a.bin')).text()).toBe('mine');
  });
});

describe.each(backends())('a failing row among others (%s, local driver)', (backend) => {
  let t: StorageTestApp;
  beforeAll(async () => {
    t = await startStorageApp(backend, 'local');
    await t.createBucket('batch');
  });
  afterAll(async () => t?.close());

  it('rows sent in one turn go in one statement; a row that cannot be written fails alone', async () => {
    const user = await createTestUser(t);
    const rows = t.deps.storage.rows;
    const sent = { ...rows.sent };
    const row = (key: string, uploadedBy: string | null, bucket = 'batch') => ({
      bucket,
      key,
      size: 3,
      mimeType: 'text/plain',
      etag: key,
      uploadedBy,
    });
    const other = await createTestUser(t);
    // Quotes, a backslash, a comma, braces and NULL: each a whole element of the statement's arrays.
    const odd = 'unit/w"NULL,{x}\\';
    const clean = await Promise.all([
      rows.write(row('unit/x', user.userId)),
      rows.write(row('unit/y', other.userId)),
      rows.write(row(odd, null)),
    ]);
    expect(clean.map((r) => [r.key, r.etag, r.uploadedBy])).toEqual([
      ['unit/x', 'unit/x', user.userId],
      ['unit/y', 'unit/y', other.userId],
      [odd, odd, null],
    ]);
    expect(rows.sent.statements - sent.statements).toBe(1);
    const results = await Promise.allSettled([
      rows.write(row('unit/a', user.userId)),
      rows.write(row('unit/b', null)),
      rows.write(row('unit/c', user.userId, 'no-such-bucket')),
      rows.write(row('unit/d', randomUUID())),
      rows.write(row('unit/e', user.userId)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(rows.sent.statements - sent.statements).toBe(2);
    expect(rows.sent.rows - sent.rows).toBe(8);
    const a = (results[0] as PromiseFulfilledResult<{ uploadedBy: string | null; uploadedAt: Date; etag: string }>)
      .value;
    expect(a).toMatchObject({ bucket: 'batch', key: 'unit/a', uploadedBy: user.userId, etag: 'unit/a', size: 3 });
    expect(a.uploadedAt).toBeInstanceOf(Date);
    const { rows: stored } = await t.deps.db.query<{ key: string }>(
      `select key from storage.objects where starts_with(key, 'unit/') order by key`,
    );
    expect(stored.map((r) => r.key)).toEqual(['unit/a', 'unit/b', 'unit/e', odd, 'unit/x', 'unit/y']);
    // The same row twice in one turn: written one after the other, never twice in one statement.
    const twice = await Promise.all([rows.write(row('unit/a', null)), rows.write(row('unit/a', null))]);
    expect(twice[1]!.uploadedAt.getTime()).toBeGreaterThanOrEqual(twice[0]!.uploadedAt.getTime());
    expect(twice.map((r) => r.uploadedBy)).toEqual([user.userId, user.userId]);
  });

  it('a write whose row fails (its uploader deleted meanwhile) leaves neither file nor row; the others land', async () => {
    const user = await createTestUser(t);
    const identity = (userId: string): Identity => ({
      kind: 'user',
      userId,
      email: 'x@example.com',
      sessionId: randomUUID(),
      claims: { sub: userId, role: 'authenticated' } as never,
      sessionChecked: true,
    });
    const write = (key: string, userId: string) =>
      t.deps.storage.putObject({
        bucket: 'batch',
        key,
        body: Readable.from([Buffer.from(key)]),
        length: key.length,
        contentType: 'text/plain',
        identity: identity(userId),
        base: 'http://x',
      });
    const gone = randomUUID();
    const results = await Promise.allSettled([
      write('gone/0.txt', user.userId),
      write('gone/1.txt', gone),
      write('gone/2.txt', user.userId),
      write('gone/3.txt', user.userId),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const { rows } = await t.deps.db.query<{ key: string }>(
      `select key from storage.objects where starts_with(key, 'gone/') order by key`,
    );
    expect(rows.map((r) => r.key)).toEqual(['gone/0.txt', 'gone/2.txt', 'gone/3.txt']);
    expect(
      t
        .localFiles()
        .filter((f) => f.startsWith('batch/gone~/'))
        .sort(),
    ).toEqual(['batch/gone~/0.txt', 'batch/gone~/2.txt', 'batch/gone~/3.txt']);
    expect(t.localTemp()).toEqual([]);
  });
});
