import pg from 'pg';

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_BACKOFF_MS = 5_000;

type Handler = (payload: string) => void;
type StateHandler = (listening: boolean) => void;

/**
 * LISTEN on a server Postgres: one dedicated `pg.Client` (a pooled connection cannot hold a
 * LISTEN), opened on the first `listen`, reconnected with backoff when it drops, and every
 * channel listened again on the new connection. Notifications sent while it is down are lost.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly stateHandlers = new Set<StateHandler>();
  private closed = false;
  private backoffMs = 100;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly url: string) {}

  async listen(channel: string, onPayload: Handler, onState?: StateHandler): Promise<() => Promise<void>> {
    if (!CHANNEL.test(channel)) throw new Error(`Bad channel name ${channel}`);
    if (this.closed) throw new Error('The database is closed.');
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(onPayload);
    const client = await this.connected();
    if (first) await client.query(`listen ${channel}`);
    if (onState) this.stateHandlers.add(onState);
    return async () => {
      if (onState) this.stateHandlers.delete(onState);
      const s = this.handlers.get(channel);
      if (!s?.delete(onPayload) || s.size > 0) return;
      this.handlers.delete(channel);
      await this.client?.query(`unlisten ${channel}`).catch(() => {});
    };
  }

  private connected(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: this.url, application_name: 'plinth-listen' });
    c.on('notification', (m) => {
      for (const h of this.handlers.get(m.channel) ?? []) h(m.payload ?? '');
    });
    const lost = () => this.lost(c);
    c.on('error', lost);
    c.on('end', lost);
    await c.connect();
    for (const channel of this.handlers.keys()) await c.query(`listen ${channel}`);
    this.client = c;
    this.backoffMs = 100;
    for (const h of this.stateHandlers) h(true);
    return c;
  }

  private lost(c: pg.Client): void {
    if (this.client !== c) return;
    this.client = null;
    c.end().catch(() => {});
    for (const h of this.stateHandlers) h(false);
    if (this.closed || this.handlers.size === 0) return;
    const retry = () => {
      this.retryTimer = null;
      if (this.closed || this.client) return;
      this.connected().catch(() => {
        this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
        this.retryTimer = setTimeout(retry, this.backoffMs);
      });
    };
    this.retryTimer = setTimeout(retry, this.backoffMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client ?? (await this.connecting?.catch(() => null)) ?? null;
    this.client = null;
    await c?.end().catch(() => {});
  }
}
