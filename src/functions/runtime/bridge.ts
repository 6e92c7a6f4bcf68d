import { chmod } from 'node:fs';
import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Headers a bridged request does not carry on: connection headers (this hop's), Host (set to
 * Plinth's own), the forwarding headers a proxy in front would set (with TRUST_PROXY a function
 * could otherwise choose the client address its calls are counted under) and every x-plinth-*
 * header (Plinth trusts none from a request; dropped here too, so none can pass as the server's).
 */
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'host', 'forwarded', 'x-real-ip']);
const dropped = (name: string) => DROPPED.has(name) || name.startsWith('x-plinth-') || name.startsWith('x-forwarded-');
/** Of a response: this hop's connection headers (Node frames the body again). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

type Target = { host: string; port: number } | { socketPath: string };

/**
 * The way a function reaches the Plinth it runs in without opening loopback to the sandbox:
 * a Unix socket in the pool's private dir (0700, the socket 0600) that only the Deno workers
 * are allowed to open, where every HTTP request is relayed to Plinth's own HTTP server as a
 * request of a local client: its credentials go through Plinth's normal auth, as on any path.
 * The workers send there every fetch of Plinth's URL (deno-bridge.js).
 */
export class ApiBridge {
  private readonly server = createServer((req, res) => this.relay(req, res));
  private readonly agent = new Agent({ keepAlive: true });
  private target: Target | null = null;
  private base: string | null;

  constructor(
    readonly socketPath: string,
    private readonly publicUrl: string | null,
    warn?: (msg: string, extra?: Record<string, unknown>) => void,
  ) {
    this.base = publicUrl;
    this.server.on('error', (err) => warn?.('the function bridge failed', { err: String(err) }));
    // Its dir is the owner's alone already; the socket too. Never what keeps the process up.
    this.server.listen(socketPath, () => chmod(socketPath, 0o600, () => {})).unref();
  }

  /** The URL functions call Plinth at (PLINTH_URL): PUBLIC_URL, else http://localhost:<port>; null until Plinth listens. */
  get url(): string | null {
    return this.target ? this.base : null;
  }

  /** Plinth's HTTP server listens at `address` (the bridge relays there; an unspecified address by its loopback). */
  listening(address: AddressInfo | string): void {
    if (typeof address === 'string') {
      this.target = { socketPath: address };
      this.base = this.publicUrl ?? 'http://localhost';
      return;
    }
    const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
    this.target = { host, port: address.port };
    this.base = this.publicUrl ?? `http://localhost:${address.port}`;
  }

  close(): Promise<void> {
    this.agent.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(req: IncomingMessage, res: ServerResponse): void {
    const target = this.target;
    if (!target || !this.base) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('Plinth is not listening yet.');
      return;
    }
    const headers: OutgoingHttpHeaders = { host: new URL(this.base).host };
    for (const [name, value] of Object.entries(req.headers))
      if (!dropped(name) && value !== undefined) headers[name] = value;
    const up = request(
      { ...target, agent: this.agent, method: req.method, path: pathOf(req.url ?? '/'), headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.headers));
        answer.pipe(res);
      },
    );
    up.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain' }).end('Plinth did not answer.');
    });
    // The function went away: so does the request to Plinth.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }
}

/** The path and query of a request target, which Deno sends in absolute form through a proxy. */
function pathOf(target: string): string {
  if (target.startsWith('/')) return target;
  try {
    const u = new URL(target);
    return u.pathname + u.search;
  } catch {
    return '/';
  }
}

function responseHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(h)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}
