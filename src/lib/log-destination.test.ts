import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { LogDestination } from './log-destination.js';

/** A pipe to a child `cat` (reading) or `sleep` (never reading): our end's fd, and the child. */
function pipeTo(cmd: 'cat' | 'sleep'): { fd: number; child: ChildProcess; out: () => string } {
  const child = spawn(cmd, cmd === 'sleep' ? ['60'] : [], { stdio: ['pipe', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stdin!.on('error', () => {});
  return { fd: (child.stdin as unknown as { _handle: { fd: number } })._handle.fd, child, out: () => out };
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe('LogDestination', () => {
  it('writes every line, in order', async () => {
    const p = pipeTo('cat');
    children.push(p.child);
    const dest = new LogDestination(p.fd);
    for (let i = 0; i < 500; i++) dest.write(`${JSON.stringify({ i, msg: 'line' })}\n`);
    await dest.drain(5000);
    const until = Date.now() + 5000;
    while (p.out().split('\n').length < 501 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    const lines = p
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).i);
    expect(lines).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('turns itself off when the reader has gone (EPIPE), and drains at once', async () => {
    const p = pipeTo('cat');
    const dest = new LogDestination(p.fd);
    p.child.kill('SIGKILL');
    await once(p.child, 'exit');
    for (const msg of ['one', 'two', 'three']) dest.write(`${JSON.stringify({ level: 40, msg })}\n`);
    const t0 = Date.now();
    await dest.drain(5000);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(dest.broken).toBe(true);
    expect(dest.write('more\n')).toBe(true); // accepted and dropped, never an error
  });

  it('never blocks on a reader that stops reading: drops past its bound, drain gives up in time', async () => {
    const p = pipeTo('sleep');
    children.push(p.child);
    const dest = new LogDestination(p.fd, 256 * 1024);
    const line = `${JSON.stringify({ msg: 'x'.repeat(1000) })}\n`;
    const t0 = Date.now();
    for (let i = 0; i < 2000; i++) dest.write(line); // ~2 MB: more than the pipe and the bound hold
    expect(Date.now() - t0).toBeLessThan(500);
    expect(dest.dropped).toBeGreaterThan(0);
    const d0 = Date.now();
    await dest.drain(300);
    expect(Date.now() - d0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - d0).toBeLessThan(2000);
  });
});
