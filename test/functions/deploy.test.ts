// A deploy sent straight to a host's standby worker (control.ts deployLocal, deno-host.js): the
// worker that took it answers the first call with the new code, a refused module changes
// nothing, and a worker with a module loaded never takes one (it goes through the control socket).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployLocal, type DeployResult } from '../../src/functions/runtime/control.js';
import { denoBinary } from '../../src/functions/runtime/deno.js';
import { HostProcess } from '../../src/functions/runtime/host-process.js';
import { hostPool } from '../../src/functions/runtime/transport.js';

const answer = (text: string) => `export default () => new Response(${JSON.stringify(text)});`;

describe('a deploy straight to the standby worker', () => {
  let dir: string;
  let host: HostProcess;
  const pools: Pool[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-deploy-'));
    host = new HostProcess({
      binary: denoBinary(),
      memoryMb: 128,
      tmpDir: path.join(dir, 't'),
      socketDir: path.join(dir, 's'),
      denoDir: path.join(dir, 'deno'),
      onLog: () => {},
      onStartFailed: () => {},
      onExit: () => {},
    });
    await host.ready;
  });
  afterAll(async () => {
    host?.kill();
    await host?.exited;
    await Promise.all(pools.map((p) => p.destroy()));
    rmSync(dir, { recursive: true, force: true });
  });

  // The host's standby worker, once it said it listens (peeked: put back for the deploy).
  const standby = async (): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      const s = host.takeStandby();
      if (s) {
        (host as unknown as { standby: string }).standby = s;
        return s;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('no standby worker was announced');
  };
  const deploy = (version: string, code: string, target = host) =>
    deployLocal(target, { version, code, secrets: { GREETING: 'hi' }, timeoutMs: 5000 }, 5000);
  const call = async (socket: string) => {
    const pool = hostPool({ socketPath: socket });
    pools.push(pool);
    const res = await pool.request({ method: 'GET', path: '/', headers: { 'x-plinth-runtime-url': 'http://x/' } });
    return res.body.text();
  };
  const socketOf = (r: DeployResult) => (r.loaded ? r.socket : null);

  it('loads into the standby worker, whose open connection answers the first call with the new code', async () => {
    const w1 = await standby();
    const first = await deploy('v1', answer('one'));
    expect(first.result).toEqual({ loaded: true, socket: w1 });
    expect(first.worker).not.toBeNull();
    const res = await first.worker!.request({
      method: 'GET',
      path: '/',
      headers: { 'x-plinth-runtime-url': 'http://x/' },
    });
    expect(await res.body.text()).toBe('one');
    // The host took the worker as its current one: its health names the version.
    const health = await host.dispatcher.request({ method: 'GET', path: '/_plinth/health' });
    expect(await health.body.json()).toEqual({ ok: true, version: 'v1' });
    await first.worker!.close();

    // No standby known right after a deploy: the control socket loads it; then a standby again.
    const second = await deploy('v2', answer('two'));
    expect(second.worker).toBeNull();
    expect(await call(socketOf(second.result)!)).toBe('two');
    const w3 = await standby();
    const third = await deploy('v3', `export default () => new Response("three " + Deno.env.get("GREETING"));`);
    expect(third.result).toEqual({ loaded: true, socket: w3 });
    expect(await call(w3)).toBe('three hi');
  });

  it('refuses a module whose entry is not a function, the serving version answering as before', async () => {
    const ok = await deploy('v4', answer('four'));
    const serving = socketOf(ok.result)!;
    expect(await call(serving)).toBe('four');
    await standby();
    const refused = await deploy('v5', 'export default 42;');
    expect(refused.result).toMatchObject({ loaded: false, kind: 'export' });
    expect(refused.worker).toBeNull();
    expect(await call(serving)).toBe('four');
    const health = await host.dispatcher.request({ method: 'GET', path: '/_plinth/health' });
    expect(await health.body.json()).toEqual({ ok: true, version: 'v4' });
    // A new standby takes the next deploy straight.
    const next = await standby();
    const again = await deploy('v6', answer('six'));
    expect(again.result).toEqual({ loaded: true, socket: next });
    expect(await call(next)).toBe('six');
  });

  it('never loads into a worker that serves a module: that deploy goes through the control socket', async () => {
    const ok = await deploy('v7', answer('seven'));
    const serving = socketOf(ok.result)!;
    // As if the host had named the serving worker's socket as its standby.
    const forged = Object.assign(Object.create(host) as HostProcess, { takeStandby: () => serving });
    const r = await deploy('v8', answer('eight'), forged);
    expect(r.worker).toBeNull();
    expect(socketOf(r.result)).not.toBe(serving);
    expect(await call(serving)).toBe('seven');
    expect(await call(socketOf(r.result)!)).toBe('eight');
  });
});
