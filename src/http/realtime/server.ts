import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Server, type Socket } from 'socket.io';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors/index.js';
import type { Identity } from '../../auth/identity.js';
import { ChannelAuthz } from '../../realtime/channels.js';
import { RealtimeHub, type LocalSockets } from '../../realtime/hub.js';
import { rtError } from '../../realtime/errors.js';
import { Connection, type SocketData } from './connection.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RtSocket = Socket<any, any, any, SocketData>;

/** The realtime server of one instance; `app.realtime` in tests and benchmarks. */
export interface RealtimeServer {
  io: Server;
  hub: RealtimeHub;
  /** Connections closed because their outgoing buffer passed REALTIME_MAX_BUFFER_BYTES. */
  stats: { slowConsumers: number };
}

declare module 'fastify' {
  interface FastifyInstance {
    realtime: RealtimeServer;
  }
}

/** The identity a handshake presents: `auth: {token}` (user JWT, anon key, admin key) or nothing (anon). */
async function handshakeIdentity(deps: Deps, auth: unknown): Promise<Identity> {
  const token = (auth as { token?: unknown } | undefined)?.token;
  if (token === undefined || token === null || token === '') return { kind: 'anon' };
  if (typeof token !== 'string' || token.length > 8192 || /\s/.test(token)) {
    throw new AppError('UNAUTHORIZED', { message: 'The handshake token must be a string.' });
  }
  const identity = await deps.identity.resolve({ authorization: `Bearer ${token}` });
  return identity.kind === 'none' ? { kind: 'anon' } : identity;
}

/**
 * Socket.IO on the API server's own HTTP server at /socket.io/ (WebSocket only), with the
 * Redis adapter when REDIS_URL is set so channels and presence span instances.
 */
export async function attachRealtime(app: FastifyInstance, deps: Deps): Promise<RealtimeServer> {
  const limits = deps.config.realtime;
  const io: Server = new Server(app.server, {
    path: '/socket.io/',
    transports: ['websocket'],
    serveClient: false,
    // Frames over twice the payload limit close the connection outright; smaller ones over
    // the limit are answered with realtime:error PAYLOAD_TOO_LARGE.
    maxHttpBufferSize: Math.max(2 * limits.maxPayloadBytes, 64 * 1024),
    cors: { origin: deps.config.corsOrigins ?? true },
  });
  const closers = await useRedisAdapter(io, deps);
  const sessions = new Map<string, Set<RtSocket>>();
  const local = localSockets(io, sessions, (kind, n) => deps.metrics.countDeliveries(kind, n));
  deps.metrics.setRealtimeSockets(() => io.engine.clientsCount);
  // Policies are the admin's code: evaluated on the owner's pool, never in a superuser's session.
  const callers = deps.owner.db;
  const hub = new RealtimeHub(deps.db, callers, local, (err) => app.log.error({ err }, 'realtime notification failed'));
  await hub.start();
  const server: RealtimeServer = { io, hub, stats: { slowConsumers: 0 } };
  const authz = new ChannelAuthz(callers);

  io.use((socket, next) => {
    handshakeIdentity(deps, socket.handshake.auth).then(
      (identity) => {
        socket.data.identity = identity;
        next();
      },
      (err) => {
        const e = err instanceof AppError ? err : new AppError('UNAUTHORIZED');
        deps.logs.write('realtime', 'warn', 'connection refused', { reason: e.code, ip: socket.handshake.address });
        next(Object.assign(new Error(e.message), { data: { code: e.code, message: e.message } }));
      },
    );
  });
  io.on('connection', (socket: RtSocket) => {
    const identity = socket.data.identity;
    const who = {
      socketId: socket.id,
      caller: identity.kind,
      userId: identity.kind === 'user' ? identity.userId : null,
      ip: socket.handshake.address,
    };
    deps.logs.write('realtime', 'info', 'connected', who);
    socket.on('disconnect', (reason) => deps.logs.write('realtime', 'info', 'disconnected', { ...who, reason }));
    if (identity.kind === 'user') {
      let set = sessions.get(identity.sessionId);
      if (!set) sessions.set(identity.sessionId, (set = new Set()));
      set.add(socket);
      socket.on('disconnect', () => {
        set!.delete(socket);
        if (set!.size === 0) sessions.delete(identity.sessionId);
      });
    }
    const onSlowConsumer = () => {
      server.stats.slowConsumers++;
      deps.logs.write('realtime', 'warn', 'slow consumer disconnected', who);
    };
    new Connection({ io, socket, authz, db: callers, limits, onSlowConsumer, log: app.log, logs: deps.logs }).start();
  });

  app.decorate('realtime', server);
  // Before the HTTP server stops: open WebSockets would keep it from closing.
  app.addHook('preClose', async () => {
    io.disconnectSockets(true);
    io.engine.close();
  });
  app.addHook('onClose', async () => {
    await hub.stop();
    for (const c of closers) await c();
  });
  return server;
}

/**
 * The Redis adapter when REDIS_URL is set; answers what closes its clients. ioredis and the
 * adapter are imported only then: a start without Redis does not load them.
 */
async function useRedisAdapter(io: Server, deps: Deps): Promise<Array<() => Promise<unknown>>> {
  if (!deps.config.rateLimit.redisUrl) return [];
  const [{ Redis }, { createAdapter }] = await Promise.all([import('ioredis'), import('@socket.io/redis-adapter')]);
  const pub = new Redis(deps.config.rateLimit.redisUrl, { maxRetriesPerRequest: 2 });
  const sub = pub.duplicate();
  pub.on('error', () => {});
  sub.on('error', () => {});
  // The adapter fires Redis commands without awaiting them: while Redis is down each would be
  // an unhandled rejection (which ends a Node process). Mark them handled; callers that do
  // await (fetchSockets) still see the failure.
  for (const client of [pub, sub])
    handleRejections(client, ['publish', 'subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe']);
  // One key per project (its JWT secret): instances of one project share channels, other
  // projects on the same Redis never see them.
  const project = createHash('sha256').update(deps.credentials.jwtSecret).digest('hex').slice(0, 16);
  io.adapter(createAdapter(pub, sub, { key: `plinth-rt:${project}` }));
  return [() => pub.quit().catch(() => {}), () => sub.quit().catch(() => {})];
}

function handleRejections(client: Redis, methods: string[]): void {
  const target = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of methods) {
    const original = target[name]!.bind(client);
    target[name] = (...args: unknown[]) => {
      const result = original(...args);
      if (result instanceof Promise) result.catch(() => {});
      return result;
    };
  }
}

/** The hub's view of this instance's sockets. */
function localSockets(
  io: Server,
  sessions: Map<string, Set<RtSocket>>,
  delivered: (kind: 'change' | 'message', n: number) => void,
): LocalSockets {
  const nsp = io.of('/');
  return {
    members: (channel) => {
      const ids = nsp.adapter.rooms.get(channel);
      if (!ids) return [];
      const out: Array<{ id: string; identity: Identity }> = [];
      for (const id of ids) {
        const s = nsp.sockets.get(id) as RtSocket | undefined;
        if (s?.data.identity) out.push({ id, identity: s.data.identity });
      }
      return out;
    },
    send: (ids, event, body) => {
      delivered('change', ids.length);
      io.local.to(ids).emit(event, body);
    },
    sendChannel: (channel, event, body) => {
      delivered('message', nsp.adapter.rooms.get(channel)?.size ?? 0);
      io.local.to(channel).emit(event, body);
    },
    endSession: (sid) => {
      for (const s of sessions.get(sid) ?? []) {
        s.emit(
          'realtime:error',
          rtError('SESSION_ENDED', 'Your session has ended (signed out, revoked or user deleted): sign in again.'),
        );
        s.disconnect(true);
      }
    },
    channels: () => {
      // Every socket is also in a room named after its id: those are not channels.
      const out: string[] = [];
      for (const room of nsp.adapter.rooms.keys()) if (!nsp.sockets.has(room)) out.push(room);
      return out;
    },
  };
}
