// A small tar (ustar + pax) writer and reader for Plinth's backup archives: regular files and
// directories only, names of any length (pax `path`), sizes past 8 GiB (pax `size`).
import { closeSync, readSync } from 'node:fs';

const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);

export interface TarEntry {
  /** Archive path, '/'-separated, no leading '/'; directories without a trailing '/'. */
  name: string;
  type: 'file' | 'dir';
  mode: number;
  size: number;
  mtime: number;
}

function octal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'ascii');
}

function rawHeader(name: string, type: string, mode: number, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, Math.floor(mtime / 1000));
  h.fill(0x20, 148, 156);
  h.write(type, 156, 1, 'ascii');
  h.write('ustar\u000000', 257, 8, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

function pad(size: number): Buffer {
  const rest = size % BLOCK;
  return rest ? Buffer.alloc(BLOCK - rest) : Buffer.alloc(0);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(body);
  let len = base + String(base).length;
  if (String(len).length > String(base).length) len = base + String(len).length;
  return `${len}${body}`;
}

/** The header block(s) of one entry; file data (padded with `padding`) follows it. */
export function entryHeader(entry: TarEntry): Buffer {
  const tarName = entry.type === 'dir' ? `${entry.name}/` : entry.name;
  const size = entry.type === 'dir' ? 0 : entry.size;
  const big = size >= 0o77777777777;
  if (Buffer.byteLength(tarName) <= 100 && !big)
    return rawHeader(tarName, entry.type === 'dir' ? '5' : '0', entry.mode, size, entry.mtime);
  let pax = paxRecord('path', tarName);
  if (big) pax += paxRecord('size', String(size));
  const body = Buffer.from(pax, 'utf8');
  return Buffer.concat([
    rawHeader('PaxHeader', 'x', 0o644, body.length, entry.mtime),
    body,
    pad(body.length),
    rawHeader(
      Buffer.from(tarName).subarray(0, 99).toString('latin1'),
      entry.type === 'dir' ? '5' : '0',
      entry.mode,
      big ? 0 : size,
      entry.mtime,
    ),
  ]);
}

/** The zero padding after `size` bytes of file data. */
export const padding = pad;

/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = ZEROS;

/** An in-memory file as archive chunks. */
export function* memoryEntry(name: string, data: Buffer, mode = 0o600): Generator<Buffer> {
  yield entryHeader({ name, type: 'file', mode, size: data.length, mtime: Date.now() });
  yield data;
  yield pad(data.length);
}

/**
 * A file on disk (open as `fd`, closed at the end) as archive chunks: exactly `size` bytes (a
 * file that shrank while it was read is padded with zeros, one that grew is cut), as
 * pg_basebackup does for a live cluster.
 */
export function* fileEntry(
  name: string,
  fd: number,
  entry: { mode: number; size: number; mtime: number },
): Generator<Buffer> {
  try {
    yield entryHeader({ name, type: 'file', ...entry });
    let left = entry.size;
    let pos = 0;
    while (left > 0) {
      const chunk = Buffer.alloc(Math.min(left, 1024 * 1024));
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) {
        yield Buffer.alloc(left);
        break;
      }
      yield n === chunk.length ? chunk : chunk.subarray(0, n);
      left -= n;
      pos += n;
    }
    yield pad(entry.size);
  } finally {
    closeSync(fd);
  }
}

function parseOctal(buf: Buffer): number {
  const s = buf.toString('ascii').replace(/\0.*$/s, '').trim();
  return s ? parseInt(s, 8) : 0;
}

function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let text = body.toString('utf8');
  while (text.length) {
    const m = /^(\d+) ([^=]+)=/.exec(text);
    if (!m) break;
    const len = Number(m[1]);
    const rec = Buffer.from(text, 'utf8').subarray(0, len).toString('utf8');
    out[m[2]!] = rec.slice(m[0].length, -1);
    text = Buffer.from(text, 'utf8').subarray(len).toString('utf8');
  }
  return out;
}

/** Receives entries from `readTar`: `data` is called for file bytes, in order, then `end`. */
export interface TarSink {
  entry(entry: TarEntry): void;
  data(chunk: Buffer): void;
  end(): void;
}

/** Reads a tar stream (already gunzipped) and hands every entry to `sink`. */
export async function readTar(source: AsyncIterable<Buffer>, sink: TarSink): Promise<void> {
  let buf: Buffer = Buffer.alloc(0);
  let fileLeft = 0;
  let skip = 0;
  let pax: Record<string, string> = {};
  let paxLeft = -1;
  let paxBody: Buffer[] = [];
  let ended = false;
  for await (const chunk of source) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (fileLeft > 0) {
        if (!buf.length) break;
        const n = Math.min(fileLeft, buf.length);
        if (paxLeft >= 0) paxBody.push(buf.subarray(0, n));
        else sink.data(buf.subarray(0, n));
        buf = buf.subarray(n);
        fileLeft -= n;
        if (fileLeft === 0 && paxLeft >= 0) {
          pax = parsePax(Buffer.concat(paxBody));
          paxLeft = -1;
          paxBody = [];
        } else if (fileLeft === 0) sink.end();
        continue;
      }
      if (skip > 0) {
        const n = Math.min(skip, buf.length);
        buf = buf.subarray(n);
        skip -= n;
        if (skip > 0) break;
        continue;
      }
      if (ended || buf.length < BLOCK) break;
      const h = buf.subarray(0, BLOCK);
      buf = buf.subarray(BLOCK);
      if (h.every((b) => b === 0)) {
        ended = true;
        continue;
      }
      const type = String.fromCharCode(h[156]!);
      let size = parseOctal(h.subarray(124, 136));
      if (type === 'x') {
        paxLeft = size;
        fileLeft = size;
        skip = pad(size).length;
        if (size === 0) paxLeft = -1;
        continue;
      }
      const prefix = h.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
      let name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
      if (prefix) name = `${prefix}/${name}`;
      if (pax.path) name = pax.path;
      if (pax.size) size = Number(pax.size);
      pax = {};
      const isDir = type === '5';
      if (type !== '0' && type !== '\0' && !isDir) throw new Error(`unsupported tar entry type "${type}" for ${name}`);
      sink.entry({
        name: name.replace(/\/+$/, ''),
        type: isDir ? 'dir' : 'file',
        mode: parseOctal(h.subarray(100, 108)),
        size: isDir ? 0 : size,
        mtime: parseOctal(h.subarray(136, 148)) * 1000,
      });
      if (!isDir) {
        fileLeft = size;
        skip = pad(size).length;
        if (size === 0) sink.end();
      }
    }
  }
  if (fileLeft > 0 || !ended) throw new Error('the archive ends early (truncated or not a Plinth backup)');
}
