import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

interface Conn {
  /** Requests of this connection not yet answered. */
  busy: number;
  idleSince: number;
}

const SWEEP_MS = 25;

/**
 * The shutdown of the HTTP server without a race on keep-alive connections (docs/operations).
 * Node's `server.close()` destroys every connection idle at that instant, and a request its
 * client had just sent (still in the kernel's buffer, not yet read) was lost to a reset. Here,
 * once `start` is called: the listening socket closes (new connections are refused), a request
 * arriving on an open connection is answered 503 with `Connection: close` by the app's hook,
 * requests in flight finish as they are, and a connection with nothing in flight is closed
 * only once it has been idle for `graceMs`: a client that sends again within that time gets
 * its answer.
 */
export class Drain {
  /** True from the start of the drain. */
  draining = false;
  private readonly conns = new Map<Socket, Conn>();
  private sweep: NodeJS.Timeout | null = null;
  /** A response's `close`: one listener for every response (no closure per request; issue #38). */
  private readonly answered: (this: ServerResponse) => void;

  constructor(private readonly server: Server) {
    const conns = this.conns;
    this.answered = function (this: ServerResponse) {
      const c = conns.get(this.req.socket);
      if (!c) return;
      c.busy--;
      c.idleSince = Date.now();
    };
    server.on('connection', (socket: Socket) => {
      this.conns.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => this.conns.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.track(req, res));
    server.once('close', () => this.sweep && clearInterval(this.sweep));
  }

  /**
   * Counts a request as in flight on its connection until its response closes. The server's
   * `request` listener calls it; so does the front lane (http/front-lane.ts), which answers
   * before the other listeners.
   */
  track(req: IncomingMessage, res: ServerResponse): void {
    const c = this.conns.get(req.socket);
    if (!c) return;
    c.busy++;
    res.on('close', this.answered);
  }

  /** Upgraded connections (WebSockets) are the realtime server's to close, not the drain's. */
  leaveUpgrades(): void {
    this.server.on('upgrade', (req: IncomingMessage) => this.conns.delete(req.socket));
  }

  /**
   * Starts the drain; resolves once no connection is idle-but-recent (every one left is busy),
   * so that the server's own close finds none to cut. Idle connections keep being closed after
   * `graceMs` until the server has closed.
   */
  start(graceMs: number): Promise<void> {
    if (!this.draining) {
      this.draining = true;
      // net.Server's close: stops listening, without http.Server's closeIdleConnections().
      if (this.server.listening) NetServer.prototype.close.call(this.server);
      this.sweep = setInterval(() => this.closeIdle(graceMs), SWEEP_MS);
      this.sweep.unref();
    }
    return new Promise<void>((resolve) => {
      const check = () => {
        this.closeIdle(graceMs);
        if ([...this.conns.values()].every((c) => c.busy > 0)) resolve();
        else setTimeout(check, SWEEP_MS).unref();
      };
      check();
    });
  }

  private closeIdle(graceMs: number): void {
    const now = Date.now();
    for (const [socket, c] of this.conns) if (c.busy === 0 && now - c.idleSince >= graceMs) socket.destroy();
  }
}
