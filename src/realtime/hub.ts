import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import { viewerKey, viewsOf, type ChangeView } from './changes.js';
import { rtError } from './errors.js';
import { changeChannels, changeChannelTable, NOTIFY_CHANNEL, readNote, type ChangeNote, type Note } from './notes.js';

/** What the hub needs from the socket layer of this instance (its own sockets only). */
export interface LocalSockets {
  /** The sockets of this instance subscribed to `channel`, with who they are. */
  members(channel: string): Array<{ id: string; identity: Identity }>;
  /** Sends one event to the given sockets of this instance (encoded once). */
  send(socketIds: string[], event: string, body: object): void;
  /** Sends one event to every socket of this instance subscribed to `channel`. */
  sendChannel(channel: string, event: string, body: object): void;
  /** Closes the sockets of this instance opened with a session that has ended. */
  endSession(sessionId: string): void;
  /** The channels at least one socket of this instance is subscribed to. */
  channels(): string[];
}

export interface Meta {
  channel: string;
  messageId: string;
  senderType: 'system' | 'user';
  senderId?: string;
  timestamp: string;
}

/** Notifications waiting beyond this many are dropped (and counted) instead of queued. */
const MAX_QUEUE = 10_000;

/**
 * The realtime core of one instance. Every instance LISTENs to plinth_realtime and delivers
 * what it hears to its own sockets only, so each socket receives a change or a
 * realtime.publish() message exactly once however many instances run. Notifications are
 * handled one at a time in commit order: a session's end is handled before anything
 * committed after it.
 *
 * Notifications sent while the LISTEN connection is down are lost (Postgres keeps none for a
 * listener that is gone). When it listens again after a drop, every local subscriber of a
 * table channel gets `realtime:error` CHANGES_MISSED for that channel, so the app fetches its
 * rows again. Broadcast channels get nothing: what clients publish there does not go through
 * Postgres, and a realtime.publish() message lost in the gap is stored nowhere, so there is
 * nothing to fetch (and the signal would only be noise for chat and typing traffic).
 */
export class RealtimeHub {
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private unlisten: (() => Promise<void>) | null = null;
  /** The LISTEN connection dropped and has not listened again yet. */
  private down = false;
  /** A CHANGES_MISSED signal waits in the queue. */
  private signalQueued = false;
  /** Counters for the health of the hub (tests and benchmarks read them); `gaps`: CHANGES_MISSED signals. */
  readonly stats = { notifications: 0, dropped: 0, failed: 0, gaps: 0 };

  /**
   * `db` listens and reads overflowed notes (Plinth's own tables); `callers` evaluates each
   * change as its subscribers (their policies are the admin's code): the owner role's pool, so
   * that code never runs in a session whose login is a superuser (docs/security.md).
   */
  constructor(
    private readonly db: Db,
    private readonly callers: Db,
    private readonly sockets: LocalSockets,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(
      NOTIFY_CHANNEL,
      (raw) => this.enqueue(raw),
      (listening) => this.listening(listening),
    );
  }

  async stop(): Promise<void> {
    const u = this.unlisten;
    this.unlisten = null;
    await u?.().catch(() => {});
    await this.chain;
  }

  private enqueue(raw: string): void {
    if (this.queued >= MAX_QUEUE) {
      // Behind everything queued: a fetch the app makes on it sees this change too.
      this.stats.dropped++;
      this.signalMissed('the server was too busy');
      return;
    }
    this.queued++;
    void this.run(() => this.handle(raw)).finally(() => this.queued--);
  }

  /** Runs `fn` after everything already queued; answers when it has run (it never rejects). */
  private run(fn: () => Promise<void> | void): Promise<void> {
    this.chain = this.chain.then(fn).catch((err) => {
      this.stats.failed++;
      this.onError(err);
    });
    return this.chain;
  }

  /**
   * The LISTEN connection's state. Back after a drop: the signal goes into the queue (never
   * dropped), after every notification heard before the drop; a change heard on the new
   * connection may come just before it, which is harmless. It is sent once LISTEN is on
   * again, so a fetch the app makes on it sees every change the connection missed. Drops
   * while a signal waits in the queue are covered by that one signal.
   */
  private listening(up: boolean): void {
    if (!up) {
      this.down = true;
      return;
    }
    if (!this.down) return;
    this.down = false;
    this.signalMissed('the server was reconnecting to the database');
  }

  /** Queues one CHANGES_MISSED signal (unless one waits already) after everything queued. */
  private signalMissed(why: string): void {
    if (this.signalQueued) return;
    this.signalQueued = true;
    this.stats.gaps++;
    void this.run(() => {
      this.signalQueued = false;
      this.changesMissed(why);
    });
  }

  /** CHANGES_MISSED to the local subscribers of every table channel, one event per channel. */
  private changesMissed(why: string): void {
    for (const channel of this.sockets.channels()) {
      const table = changeChannelTable(channel);
      if (table === null) continue;
      const what = channel === `table:${table}` ? 'fetch the rows again' : 'fetch the row again';
      const message = `Changes to table "${table}" made while ${why} were not delivered: ${what}.`;
      this.sockets.sendChannel(channel, 'realtime:error', { channel, ...rtError('CHANGES_MISSED', message) });
    }
  }

  private async handle(raw: string): Promise<void> {
    this.stats.notifications++;
    const note: Note | null = await readNote(this.db, raw);
    if (!note) return;
    if (note.k === 'session') return this.sockets.endSession(note.sid);
    if (note.k === 'msg') {
      const meta: Meta = { channel: note.channel, messageId: note.id, senderType: 'system', timestamp: iso(note.at) };
      return this.sockets.sendChannel(note.channel, note.event, { ...note.payload, meta });
    }
    await this.deliverChange(note);
  }

  /** One change to every local subscriber of its channels, as each subscriber may see it. */
  private async deliverChange(note: ChangeNote): Promise<void> {
    const targets = changeChannels(note).map((channel) => ({ channel, members: this.sockets.members(channel) }));
    const viewers = new Map<string, Identity>();
    for (const t of targets) for (const m of t.members) viewers.set(viewerKey(m.identity), m.identity);
    if (viewers.size === 0) return;
    const views = await viewsOf(this.callers, note, viewers);
    for (const { channel, members } of targets) {
      const byView = new Map<ChangeView, string[]>();
      for (const m of members) {
        const v = views.get(viewerKey(m.identity));
        if (!v) continue;
        const ids = byView.get(v);
        if (ids) ids.push(m.id);
        else byView.set(v, [m.id]);
      }
      for (const [v, ids] of byView) {
        const meta: Meta = { channel, messageId: note.id, senderType: 'system', timestamp: iso(note.at) };
        this.sockets.send(ids, v.type, { ...v, meta });
      }
    }
  }
}

/** Postgres timestamps (now()) as ISO 8601 in UTC. */
function iso(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? new Date().toISOString() : d.toISOString();
}
