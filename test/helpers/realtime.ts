import { io, type Socket } from 'socket.io-client';

/** A socket.io-client connection to a test server, as the SDK opens it (WebSocket only). */
export async function connectSocket(url: string, token?: string): Promise<Socket> {
  const socket = io(url, {
    transports: ['websocket'],
    auth: token ? { token } : {},
    reconnection: false,
    forceNew: true,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err) => reject(err));
  });
  return socket;
}

/** The connect_error a handshake is refused with. */
export function refusedHandshake(url: string, token: string): Promise<Error & { data?: { code: string } }> {
  const socket = io(url, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => {
      socket.close();
      reject(new Error('connected'));
    });
    socket.once('connect_error', (err) => {
      socket.close();
      resolve(err as Error & { data?: { code: string } });
    });
  });
}

export function subscribe(socket: Socket, channel: unknown): Promise<any> {
  return socket.emitWithAck('realtime:subscribe', { channel });
}

/**
 * Collects every event a socket receives, in order; `next(event)` resolves with the next one
 * of that name (already received ones first).
 */
export class Inbox {
  readonly events: Array<{ event: string; body: any }> = [];
  private waiters: Array<{ event: string; resolve: (b: any) => void }> = [];
  private taken = new Set<number>();

  constructor(readonly socket: Socket) {
    socket.onAny((event: string, body: unknown) => {
      const w = this.waiters.findIndex((x) => x.event === event);
      if (w >= 0) {
        this.events.push({ event, body });
        this.taken.add(this.events.length - 1);
        const [waiter] = this.waiters.splice(w, 1);
        waiter!.resolve(body);
      } else this.events.push({ event, body });
    });
  }

  next(event: string): Promise<any> {
    const i = this.events.findIndex((e, idx) => e.event === event && !this.taken.has(idx));
    if (i >= 0) {
      this.taken.add(i);
      return Promise.resolve(this.events[i]!.body);
    }
    return new Promise((resolve) => this.waiters.push({ event, resolve }));
  }

  /** Resolves once `n` events of the given names have arrived in all. */
  async count(names: string[], n: number): Promise<void> {
    while (this.all(...names).length < n) await new Promise((r) => setTimeout(r, 10));
  }

  /** The events of the given names received so far (taken or not). */
  all(...names: string[]): Array<{ event: string; body: any }> {
    return this.events.filter((e) => names.includes(e.event));
  }
}

/** Resolves when the socket disconnects, with the reason. */
export function disconnected(socket: Socket): Promise<string> {
  if (socket.disconnected) return Promise.resolve('already');
  return new Promise((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
}
