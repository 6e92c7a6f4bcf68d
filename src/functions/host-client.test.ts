import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { hostPool, HostUnreachable, sendToHost } from './host-client.js';

const fn = { id: 'f', version: 'v1', load: async () => ({ code: '', secrets: {} }) };

/** A host on a Unix socket that reads the start of a call and then drops the connection. */
async function droppingHost(dir: string): Promise<{ socketPath: string; server: Server }> {
  const socketPath = path.join(dir, 'host.sock');
  const server = createServer((s) => s.once('data', () => setTimeout(() => s.destroy(), 50)));
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return { socketPath, server };
}

describe('sendToHost, when a call with a body fails halfway', () => {
  let dir: string;
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (socketPath: string, body: PassThrough) =>
    sendToHost(
      { dispatcher: hostPool({ socketPath }) },
      fn,
      { method: 'POST', url: 'http://localhost/functions/f', headers: { 'content-length': '1000' }, body },
      { timeoutMs: 5000, onTimeout: () => {} },
    ).then(
      () => null,
      (err: unknown) => err,
    );

  it('blames the host when the host drops the connection', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-host-client-'));
    const host = await droppingHost(dir);
    server = host.server;
    const body = new PassThrough();
    body.write('x'.repeat(100));
    expect(await call(host.socketPath, body)).toBeInstanceOf(HostUnreachable);
  });

  it('blames the client when its body stops before the end', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-host-client-'));
    const socketPath = path.join(dir, 'host.sock');
    // A host that waits for the whole body, which never comes.
    server = createServer(() => {});
    await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
    const body = new PassThrough();
    body.write('x'.repeat(100));
    setTimeout(() => body.destroy(new Error('aborted')), 50);
    const err = await call(socketPath, body);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('MALFORMED_REQUEST');
  });
});
