import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { END_OF_ARCHIVE, entryHeader, memoryEntry, readTar, type TarEntry } from './tar.js';

async function read(chunks: Buffer[]): Promise<Array<TarEntry & { body: string }>> {
  const out: Array<TarEntry & { body: string }> = [];
  let parts: Buffer[] = [];
  await readTar(
    (async function* () {
      // One byte at a time at the start: headers and data split across chunks.
      const all = Buffer.concat(chunks);
      for (let i = 0; i < 1500; i++) yield all.subarray(i, i + 1);
      yield all.subarray(1500);
    })(),
    {
      entry: (e) => {
        out.push({ ...e, body: '' });
        parts = [];
      },
      data: (c) => parts.push(Buffer.from(c)),
      end: () => {
        out[out.length - 1]!.body = Buffer.concat(parts).toString();
      },
    },
  );
  return out;
}

describe('tar', () => {
  const long = `storage/${'a'.repeat(120)}/ünï/${'b'.repeat(90)}.txt`;
  const archive = () => [
    entryHeader({ name: 'postgres', type: 'dir', mode: 0o700, size: 0, mtime: 0 }),
    ...memoryEntry('postgres/PG_VERSION', Buffer.from('18\n')),
    ...memoryEntry(long, Buffer.from('x'.repeat(1000))),
    ...memoryEntry('empty', Buffer.alloc(0)),
    END_OF_ARCHIVE,
  ];

  it('round-trips directories, files, empty files and names past 100 bytes (pax)', async () => {
    const got = await read(archive());
    expect(got.map((e) => [e.name, e.type, e.body.length])).toEqual([
      ['postgres', 'dir', 0],
      ['postgres/PG_VERSION', 'file', 3],
      [long, 'file', 1000],
      ['empty', 'file', 0],
    ]);
    expect(got[0]!.mode & 0o777).toBe(0o700);
  });

  it('GNU tar lists the archive with the long name', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plinth-tar-'));
    try {
      writeFileSync(path.join(dir, 'a.tar'), Buffer.concat(archive()));
      const list = execFileSync('tar', ['tf', path.join(dir, 'a.tar')])
        .toString()
        .trim()
        .split('\n');
      expect(list).toEqual(['postgres/', 'postgres/PG_VERSION', long, 'empty']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an archive cut short', async () => {
    const all = Buffer.concat(archive());
    await expect(read([all.subarray(0, all.length - 1500)])).rejects.toThrow(/ends early/);
  });
});
