import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive } from '../../src/lib/process.js';
import { denoBinary } from '../../src/functions/runtime/deno.js';
import { HostPool } from '../../src/functions/runtime/pool.js';
import type { InvokeResponse } from '../../src/functions/runtime/types.js';

const fn = (id: string, text = id) => ({
  id,
  version: 'v1',
  load: async () => ({ code: `export default () => new Response(${JSON.stringify(text)})`, secrets: {} }),
});
const GET = { method: 'GET', url: 'http://x/', headers: {}, body: null };
const text = async (r: InvokeResponse) => {
  if (Buffer.isBuffer(r.body)) return r.body.toString();
  let s = '';
  for await (const c of r.body) s += c;
  return s;
};

describe('function processes', () => {
  it('exit when the server that started them is killed', async () => {
    // A temp root of its own, so pools started by other test files cannot sweep it first.
    const root = mkdtempSync(path.join(tmpdir(), 'plinth-lifecycle-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/functions/fixtures/pool-child.ts', root], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', () => reject(new Error(`child exited early: ${out}`)));
    });
    const [pidText, answer, dir] = line.split(' ');
    const hostPid = Number(pidText);
    expect(answer).toBe('up');
    expect(alive(hostPid)).toBe(true);
    child.kill('SIGKILL');
    let gone = false;
    for (let i = 0; i < 50 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100));
      gone = !alive(hostPid);
    }
    if (!gone) process.kill(hostPid, 'SIGKILL');
    expect(gone).toBe(true);
    // The next pool started on this machine removes the dead server's temp dir.
    expect(existsSync(dir!)).toBe(true);
    expect(dir!.startsWith(root)).toBe(true);
    await new HostPool({
      binary: denoBinary(),
      memoryMb: 64,
      timeoutMs: 10_000,
      onLog: () => {},
      tmpRoot: root,
    }).close();
    expect(existsSync(dir!)).toBe(false);
    rmSync(root, { recursive: true, force: true });
  });
});

describe('host pool', () => {
  it('keeps at most maxHosts warm processes, stopping the least recently used', async () => {
    const pool = new HostPool({ binary: denoBinary(), memoryMb: 64, timeoutMs: 10_000, onLog: () => {}, maxHosts: 2 });
    try {
      expect(await text(await pool.invoke(fn('a'), GET))).toBe('a');
      const a = pool.pidOf('a');
      expect(await text(await pool.invoke(fn('b'), GET))).toBe('b');
      expect(await text(await pool.invoke(fn('c'), GET))).toBe('c');
      expect(pool.pidOf('a')).toBeNull();
      expect(pool.pidOf('b')).not.toBeNull();
      expect(pool.pidOf('c')).not.toBeNull();
      // Called again, it starts anew.
      expect(await text(await pool.invoke(fn('a'), GET))).toBe('a');
      expect(pool.pidOf('a')).not.toBe(a);
    } finally {
      await pool.close();
    }
  });

  it('stops processes left idle', async () => {
    const pool = new HostPool({ binary: denoBinary(), memoryMb: 64, timeoutMs: 10_000, onLog: () => {}, idleMs: 300 });
    try {
      expect(await text(await pool.invoke(fn('idle'), GET))).toBe('idle');
      const pid = pool.pidOf('idle')!;
      expect(alive(pid)).toBe(true);
      let gone = false;
      for (let i = 0; i < 40 && !gone; i++) {
        await new Promise((r) => setTimeout(r, 100));
        gone = pool.pidOf('idle') === null && !alive(pid);
      }
      expect(gone).toBe(true);
      expect(await text(await pool.invoke(fn('idle'), GET))).toBe('idle');
    } finally {
      await pool.close();
    }
  });

  it('blames a response cut half-way on the function while its process lives, on the runtime once it died', async () => {
    const pool = new HostPool({ binary: denoBinary(), memoryMb: 64, timeoutMs: 10_000, onLog: () => {} });
    // Sends one chunk, then fails its stream on ?fail, or waits (to be killed) otherwise.
    const code = `export default (req) => {
      const fail = new URL(req.url).searchParams.has('fail');
      let sent = false;
      return new Response(new ReadableStream({
        async pull(c) {
          if (!sent) { sent = true; return c.enqueue(new TextEncoder().encode('first')); }
          if (fail) return c.error(new Error('broke'));
          await new Promise(() => {});
        },
      }));
    }`;
    const streaming = { id: 'cut', version: 'v1', load: async () => ({ code, secrets: {} }) };
    const readAll = async (r: InvokeResponse) =>
      text(r).then(
        () => null,
        (err: unknown) => err,
      );
    try {
      const failed = await pool.invoke(streaming, { ...GET, url: 'http://x/?fail' });
      const pid = pool.pidOf('cut')!;
      expect(await readAll(failed)).toMatchObject({ code: 'FUNCTION_ERROR' });
      expect(pool.pidOf('cut')).toBe(pid);
      const killed = await pool.invoke(streaming, GET);
      process.kill(pid, 'SIGKILL');
      expect(await readAll(killed)).toMatchObject({ code: 'FUNCTION_RUNTIME_UNAVAILABLE' });
      expect(pool.pidOf('cut')).toBeNull();
    } finally {
      await pool.close();
    }
  });

  it('keeps the version it serves when a new one is refused at load', async () => {
    const pool = new HostPool({ binary: denoBinary(), memoryMb: 64, timeoutMs: 10_000, onLog: () => {} });
    try {
      expect(await text(await pool.invoke(fn('keep', 'v1 answer'), GET))).toBe('v1 answer');
      const pid = pool.pidOf('keep');
      const refused = {
        id: 'keep',
        version: 'v2',
        load: async () => ({ code: 'export default [1, 2];', secrets: {} }),
      };
      const err = await pool.load(refused).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'INVALID_FUNCTION_CODE',
        message:
          'The default export is an array; export a default function that takes a Request and returns a Response.',
      });
      expect(pool.pidOf('keep')).toBe(pid);
      expect(await text(await pool.invoke(fn('keep', 'v1 answer'), GET))).toBe('v1 answer');
    } finally {
      await pool.close();
    }
  });

  it('answers FUNCTION_RUNTIME_UNAVAILABLE when deno cannot start, and backs off', async () => {
    const pool = new HostPool({ binary: '/nonexistent/deno', memoryMb: 64, timeoutMs: 10_000, onLog: () => {} });
    try {
      const err = await pool.invoke(fn('x'), GET).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'FUNCTION_RUNTIME_UNAVAILABLE' });
      const again = await pool.invoke(fn('x'), GET).catch((e: unknown) => e);
      expect(again).toMatchObject({ code: 'FUNCTION_RUNTIME_UNAVAILABLE' });
      await expect(pool.check()).rejects.toThrow();
    } finally {
      await pool.close();
    }
  });
});
