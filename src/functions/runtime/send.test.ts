import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../errors/index.js';
import { HostUnreachable } from './faults.js';
import { sendToHost, type SendOptions } from './send.js';
import { hostPool } from './transport.js';

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
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-send-'));
    const host = await droppingHost(dir);
    server = host.server;
    const body = new PassThrough();
    body.write('x'.repeat(100));
    expect(await call(host.socketPath, body)).toBeInstanceOf(HostUnreachable);
  });

  it('blames the client when its body stops before the end', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-send-'));
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

/** A host on a Unix socket that answers every call with `raw` (then, if `drop`, closes). */
async function rawHost(dir: string, raw: string, drop = false): Promise<{ socketPath: string; server: Server }> {
  const socketPath = path.join(dir, 'host.sock');
  const server = createServer((s) => {
    s.on('error', () => {}); // the relay resets connections it refuses
    s.once('data', () => {
      s.write(raw);
      if (drop) setTimeout(() => s.destroy(), 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return { socketPath, server };
}

describe('sendToHost, when the answer is not one to relay', () => {
  let dir: string;
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const GET = { method: 'GET', url: 'http://localhost/functions/f', headers: {}, body: null };
  const call = async (raw: string, opts: Partial<SendOptions> = {}, drop = false) => {
    dir = mkdtempSync(path.join(tmpdir(), 'plinth-send-'));
    const host = await rawHost(dir, raw, drop);
    server = host.server;
    return sendToHost({ dispatcher: hostPool({ socketPath: host.socketPath }) }, fn, GET, {
      timeoutMs: 5000,
      onTimeout: () => {},
      ...opts,
    });
  };
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (err: unknown) => err,
    );

  it("refuses a 1xx status as the function's fault, and logs why", async () => {
    const lines: string[] = [];
    const err = await failure(
      call('HTTP/1.1 101 Switching Protocols\r\nconnection: keep-alive\r\n\r\n', { log: (m) => lines.push(m) }),
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('FUNCTION_ERROR');
    expect(lines).toEqual(['The function returned status 101; a function must answer with a status from 200 to 599.']);
  });

  it("refuses headers over the limit as the function's fault", async () => {
    const lines: string[] = [];
    const err = await failure(
      call(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(64 * 1024)}\r\ncontent-length: 1\r\n\r\nx`, {
        log: (m) => lines.push(m),
      }),
    );
    expect((err as AppError).code).toBe('FUNCTION_ERROR');
    expect(lines).toEqual(["The function's response headers are larger than 16 KiB."]);
  });

  it('asks whom to blame when the host cuts a response after its head, and blames the runtime by default', async () => {
    const head = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n';
    const blamed = new AppError('FUNCTION_ERROR');
    const res = await call(head, { blameCut: async () => blamed }, true);
    expect(res.status).toBe(200);
    const read = async () => {
      for await (const _ of res.body as NodeJS.ReadableStream);
    };
    expect(await failure(read())).toBe(blamed);
    server?.close();
    rmSync(dir, { recursive: true, force: true });
    const plain = await call(head, {}, true);
    const err = await failure(
      (async () => {
        for await (const _ of plain.body as NodeJS.ReadableStream);
      })(),
    );
    expect((err as AppError).code).toBe('FUNCTION_RUNTIME_UNAVAILABLE');
  });
});
