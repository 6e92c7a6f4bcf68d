import type { LogWriter } from '../../logs/index.js';
import { randomUUID } from 'node:crypto';
import type { Server, Socket } from 'socket.io';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../../errors/index.js';
import type { Identity } from '../../auth/identity.js';
import { parseChannel, type Channel, type ChannelAuthz, type Grant } from '../../realtime/channels.js';
import { rtError, type RealtimeError } from '../../realtime/errors.js';
import { jsonSize, TokenBucket, type RealtimeLimits } from '../../realtime/limits.js';
import type { Meta } from '../../realtime/hub.js';
import { viewersOf, visibleTo } from '../../realtime/presence.js';
import type { Db } from '../../db/types.js';
import { watchSlowConsumer } from './slow-consumer.js';

/** A member of a channel as presence shows it. */
export interface Member {
  presenceId: string;
  type: 'user' | 'anonymous';
  userId?: string;
  joinedAt: string;
}

/** What each socket carries (also across instances, for presence through the Redis adapter). */
export interface SocketData {
  identity: Identity;
  presenceId: string;
  /** Channel → when this socket joined it. */
  joined: Record<string, string>;
}

type AnySocket = Socket<any, any, any, SocketData>;
type Ack = (answer: unknown) => void;

/** Event names a client may publish: not reserved by Socket.IO or by this protocol. */
const EVENT = /^[A-Za-z0-9_.:-]{1,100}$/;
const RESERVED = /^(realtime:|presence:)|^(connect|connect_error|disconnect|disconnecting|newListener|removeListener)$/;
const KNOWN = new Set(['realtime:subscribe', 'realtime:unsubscribe', 'realtime:publish']);
/** Channels whose publish right was checked without a subscription, kept per connection. */
const PUBLISH_CACHE = 64;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ConnectionOptions {
  io: Server;
  socket: AnySocket;
  authz: ChannelAuthz;
  /**
   * For presence: who may see whom, by the viewers' policies (realtime/presence.ts). The owner
   * role's pool: policies are the admin's code, never run in a superuser's session.
   */
  db: Db;
  limits: RealtimeLimits;
  onSlowConsumer: () => void;
  log: FastifyBaseLogger;
  /** The log store: refused subscriptions (source realtime). */
  logs?: LogWriter;
}

/** One client connection: its subscriptions, limits, presence and the life of its token. */
export class Connection {
  private readonly socket: AnySocket;
  private readonly identity: Identity;
  /** Subscribed channel → may publish there. */
  private readonly subs = new Map<string, boolean>();
  /** Subscribed channels that show presence. */
  private readonly presenceOn = new Set<string>();
  private readonly pending = new Set<string>();
  private readonly publishRights = new Map<string, Promise<Grant>>();
  private readonly bucket: TokenBucket;
  private expiry: NodeJS.Timeout | null = null;

  constructor(private readonly opts: ConnectionOptions) {
    this.socket = opts.socket;
    this.identity = opts.socket.data.identity;
    this.bucket = new TokenBucket(opts.limits.messagesPerSecond);
  }

  start(): void {
    const s = this.socket;
    s.data.presenceId = randomUUID();
    s.data.joined = {};
    s.on('realtime:subscribe', (msg: unknown, ack: unknown) => void this.guard(() => this.subscribe(msg, ack)));
    s.on('realtime:unsubscribe', (msg: unknown) => void this.guard(() => this.unsubscribe(msg)));
    s.on('realtime:publish', (msg: unknown) => void this.guard(() => this.publish(msg)));
    s.onAny((event: unknown) => {
      if (typeof event !== 'string' || !KNOWN.has(event))
        this.error(rtError('UNKNOWN_EVENT', `Unknown event; send one of ${[...KNOWN].join(', ')}.`));
    });
    s.on('disconnecting', () => this.leaveAll());
    s.on('disconnect', () => this.expiry && clearTimeout(this.expiry));
    watchSlowConsumer(this.socket, this.opts.limits.maxBufferBytes, this.opts.onSlowConsumer);
    this.watchExpiry();
  }

  /** Runs a handler; an unexpected failure is a realtime:error, never a crash. */
  private async guard(fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (err instanceof AppError && (err.code === 'AUTH_UNAUTHORIZED' || err.code === 'INVALID_TOKEN')) {
        this.error(rtError('SESSION_ENDED', 'Your session has ended: sign in again.'));
        this.socket.disconnect(true);
        return;
      }
      this.opts.log.error({ err }, 'realtime handler failed');
      this.error(rtError('INTERNAL_ERROR', 'The server could not handle this event; try again.'));
    }
  }

  private error(e: RealtimeError & { channel?: string }): void {
    this.socket.emit('realtime:error', e);
  }

  private overRate(channel?: string): boolean {
    if (this.bucket.take()) return false;
    this.error({
      channel,
      ...rtError('RATE_LIMITED', `More than ${this.opts.limits.messagesPerSecond} events a second: slow down.`),
    });
    return true;
  }

  private async subscribe(msg: unknown, ack: unknown): Promise<void> {
    const name = isObject(msg) && typeof msg.channel === 'string' ? msg.channel : undefined;
    if (typeof ack !== 'function') {
      return this.error({
        channel: name,
        ...rtError('INVALID_MESSAGE', 'realtime:subscribe needs an acknowledgement callback: its answer comes there.'),
      });
    }
    const answer = ack as Ack;
    const fail = (e: RealtimeError) => {
      const who = this.identity.kind === 'user' ? this.identity.userId : null;
      this.opts.logs?.write('realtime', 'warn', 'subscription refused', {
        channel: name ?? null,
        reason: e.code,
        socketId: this.socket.id,
        caller: this.identity.kind,
        userId: who,
      });
      answer({ ok: false, channel: name ?? null, error: e });
    };
    if (this.overRate(name)) return;
    const channel = parseChannel(name);
    if (!channel)
      return fail(
        rtError(
          'INVALID_CHANNEL',
          'Send {channel}: 1 to 255 printable characters, no spaces; table channels are table:<table> or table:<table>:<id>.',
        ),
      );
    if (this.subs.has(channel.name))
      return answer({ ok: true, channel: channel.name, presence: { members: await this.members(channel.name) } });
    if (this.subs.size + this.pending.size >= this.opts.limits.maxSubscriptions) {
      return fail(
        rtError(
          'TOO_MANY_SUBSCRIPTIONS',
          `At most ${this.opts.limits.maxSubscriptions} subscriptions per connection: unsubscribe from one first.`,
        ),
      );
    }
    if (this.pending.has(channel.name))
      return fail(rtError('INVALID_MESSAGE', 'A subscription to this channel is already pending.'));
    this.pending.add(channel.name);
    let grant;
    try {
      grant = await this.opts.authz.check(this.identity, channel);
    } finally {
      this.pending.delete(channel.name);
    }
    if (!grant.ok) return fail(grant.error);
    if (this.socket.disconnected) return;
    this.subs.set(channel.name, grant.publish);
    if (grant.presence) this.presenceOn.add(channel.name);
    const joinedAt = new Date().toISOString();
    this.socket.data.joined[channel.name] = joinedAt;
    this.socket.join(channel.name);
    // A failed announcement is logged; the subscription itself stands.
    await this.announce(channel.name, 'presence:join', this.member(channel.name)).catch((err) =>
      this.opts.log.error({ err }, 'presence announcement failed'),
    );
    answer({ ok: true, channel: channel.name, presence: { members: await this.members(channel.name) } });
  }

  private unsubscribe(msg: unknown): void {
    const name = isObject(msg) ? msg.channel : undefined;
    if (typeof name !== 'string') return this.error(rtError('INVALID_MESSAGE', 'Send {channel} to unsubscribe.'));
    if (this.overRate(name)) return;
    if (!this.subs.has(name)) return;
    this.leave(name);
  }

  private leave(name: string): void {
    const member = this.member(name);
    const announced = this.presenceOn.delete(name);
    this.subs.delete(name);
    delete this.socket.data.joined[name];
    this.socket.leave(name);
    if (announced) void this.guard(() => this.announce(name, 'presence:leave', member, true));
  }

  /**
   * Tells the other members of a presence channel that this connection joined or left, each
   * only if their policies let them see it (realtime/presence.ts). Other channels: nothing.
   */
  private async announce(
    channel: string,
    event: 'presence:join' | 'presence:leave',
    member: Member,
    force = false,
  ): Promise<void> {
    if (!force && !this.presenceOn.has(channel)) return;
    const others = (await this.opts.io.in(channel).fetchSockets()).filter((s) => s.id !== this.socket.id);
    if (others.length === 0) return;
    const may = await viewersOf(
      this.opts.db,
      this.identity,
      channel,
      others.map((s) => (s.data as SocketData).identity),
    );
    const body = { meta: this.meta(channel, 'system'), member };
    others.forEach((s, i) => may[i] && s.emit(event, body));
  }

  private leaveAll(): void {
    for (const name of [...this.subs.keys()]) this.leave(name);
  }

  private async publish(msg: unknown): Promise<void> {
    if (!isObject(msg) || typeof msg.channel !== 'string' || typeof msg.event !== 'string') {
      return this.error(rtError('INVALID_MESSAGE', 'Send {channel, event, payload} to publish.'));
    }
    const { channel: name, event, payload = {} } = msg;
    if (this.overRate(name)) return;
    if (!EVENT.test(event) || RESERVED.test(event)) {
      return this.error({
        channel: name,
        ...rtError(
          'INVALID_MESSAGE',
          'The event name must be 1 to 100 letters, digits, _ . : -, and not start with realtime: or presence:.',
        ),
      });
    }
    if (!isObject(payload))
      return this.error({ channel: name, ...rtError('INVALID_MESSAGE', 'The payload must be a JSON object.') });
    const size = jsonSize(payload);
    if (size > this.opts.limits.maxPayloadBytes) {
      return this.error({
        channel: name,
        ...rtError(
          'PAYLOAD_TOO_LARGE',
          `The payload is ${size} bytes; the limit is ${this.opts.limits.maxPayloadBytes}.`,
        ),
      });
    }
    const channel = parseChannel(name);
    if (!channel) return this.error({ channel: name, ...rtError('INVALID_CHANNEL', 'Not a valid channel name.') });
    const denied = await this.publishDenied(channel);
    if (denied) return this.error({ channel: name, ...denied });
    this.opts.io
      .to(channel.name)
      .emit(event, { ...payload, meta: this.meta(channel.name, this.identity.kind === 'admin' ? 'system' : 'user') });
  }

  private async publishDenied(channel: Channel): Promise<RealtimeError | null> {
    const subscribed = this.subs.get(channel.name);
    if (subscribed !== undefined)
      return subscribed
        ? null
        : rtError('PUBLISH_DENIED', 'No INSERT policy on realtime.messages lets you publish on this channel.');
    // The promise is cached, not its answer: a burst of publishes before the first check
    // returns asks Postgres once, not once a message (which emptied the pool under load).
    let grant = this.publishRights.get(channel.name);
    if (!grant) {
      if (this.publishRights.size >= PUBLISH_CACHE) this.publishRights.delete(this.publishRights.keys().next().value!);
      grant = this.opts.authz.canPublish(this.identity, channel);
      this.publishRights.set(channel.name, grant);
      // A refusal is asked again next time (a policy may have been added); so is a failure.
      grant.then(
        (g) => g.ok || this.publishRights.delete(channel.name),
        () => this.publishRights.delete(channel.name),
      );
    }
    const g = await grant;
    return g.ok ? null : g.error;
  }

  private meta(channel: string, senderType: 'system' | 'user'): Meta {
    const meta: Meta = { channel, messageId: randomUUID(), senderType, timestamp: new Date().toISOString() };
    if (senderType === 'user' && this.identity.kind === 'user') meta.senderId = this.identity.userId;
    return meta;
  }

  private member(channel: string): Member {
    return memberOf(this.socket.data, channel);
  }

  /**
   * The members this connection may see, on every instance (the Redis adapter asks the
   * others): itself only on a channel without presence, else those its policies allow.
   */
  private async members(channel: string): Promise<Member[]> {
    if (!this.presenceOn.has(channel)) return [this.member(channel)];
    const sockets = (await this.opts.io.in(channel).fetchSockets()).filter((s) => s.id !== this.socket.id);
    const may = await visibleTo(
      this.opts.db,
      this.identity,
      channel,
      sockets.map((s) => (s.data as SocketData).identity),
    );
    return [
      this.member(channel),
      ...sockets.filter((_, i) => may[i]).map((s) => memberOf(s.data as SocketData, channel)),
    ];
  }

  /** A user's socket closes when its access token expires (the SDK reconnects with a fresh one). */
  private watchExpiry(): void {
    if (this.identity.kind !== 'user') return;
    const ms = Math.min(this.identity.claims.exp * 1000 - Date.now(), 2 ** 31 - 1);
    this.expiry = setTimeout(
      () => {
        this.error(rtError('TOKEN_EXPIRED', 'Your access token has expired: reconnect with a fresh one.'));
        this.socket.disconnect(true);
      },
      Math.max(ms, 0),
    );
    this.expiry.unref();
  }
}

function memberOf(data: SocketData, channel: string): Member {
  const m: Member = {
    presenceId: data.presenceId,
    type: data.identity.kind === 'anon' ? 'anonymous' : 'user',
    joinedAt: data.joined?.[channel] ?? new Date().toISOString(),
  };
  if (data.identity.kind === 'user') m.userId = data.identity.userId;
  return m;
}
