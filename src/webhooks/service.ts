import { Readable } from 'node:stream';
import { Webhook } from 'standardwebhooks';
import type { Dispatcher } from 'undici';
import type { Db } from '../db/types.js';
import { AppError } from '../errors/index.js';
import type { FunctionService } from '../functions/service.js';
import type { JobContext, Jobs } from '../jobs/index.js';
import { outboundFetch, refuseUrl, type OutboundPolicy } from '../lib/outbound.js';
import { checkIdent } from '../database/ident.js';
import { errorText } from '../schedules/targets.js';
import { IdleGate } from '../lib/idle-gate.js';
import { HookStore, type Delivery, type Hook, type HookEvent, type HookRow } from './store.js';

export type { Hook, Delivery } from './store.js';

const DELIVERY_QUEUE = 'webhook-delivery';
const RETENTION_QUEUE = 'webhooks-retention';
const RELAY_BATCH = 500;
const RESPONSE_BYTES = 1024;

export interface WebhookOptions {
  maxAttempts: number;
  retryDelaySeconds: number;
  timeoutMs: number;
  maxPayloadBytes: number;
  deliveryRetentionDays: number;
  /** How often each instance looks at the outbox. */
  pollMs: number;
  log: (level: 'info' | 'warn', msg: string, extra?: Record<string, unknown>) => void;
}

export interface WebhookDeps {
  db: Db;
  jobs: Jobs | null;
  functions: FunctionService;
  policy: OutboundPolicy;
  dispatcher: Dispatcher;
  publicUrl: string | null;
}

export interface HookInput {
  name?: string;
  table?: string;
  events?: HookEvent[];
  columns?: string[] | null;
  url?: string | null;
  functionSlug?: string | null;
  enabled?: boolean;
}

/**
 * Database webhooks: a trigger writes each change of a hooked table to an outbox in the
 * changing transaction; every instance's relay moves outbox rows to the delivery log and
 * enqueues their delivery jobs in one transaction; a delivery is a signed POST (Standard
 * Webhooks), retried with back-off by the job library, then marked failed.
 */
export class WebhookService {
  readonly store: HookStore;
  private running = false;
  private sweep: NodeJS.Timeout | null = null;
  private relaying: Promise<void> | null = null;
  private again = false;
  /** No enabled hook and an empty outbox when last looked: the poll rests (lib/idle-gate.ts). */
  private readonly gate: IdleGate;

  constructor(
    private readonly deps: WebhookDeps,
    private readonly opts: WebhookOptions,
  ) {
    this.store = new HookStore(deps.db);
    this.gate = new IdleGate(() => this.store.nothingToRelay());
  }

  private need(): Jobs {
    if (!this.deps.jobs) throw new AppError('JOBS_UNAVAILABLE');
    return this.deps.jobs;
  }

  async start(): Promise<void> {
    const jobs = this.need();
    await jobs.work<{ deliveryId: string }>(DELIVERY_QUEUE, { concurrency: 32 }, (job) => this.deliver(job));
    await jobs.work(RETENTION_QUEUE, { concurrency: 1 }, async () => ({
      pruned: await this.store.prune(this.opts.deliveryRetentionDays),
    }));
    await jobs.boss.schedule(RETENTION_QUEUE, '*/10 * * * *');
    // The outbox is polled: a cheap indexed look that finds changes committed by anyone, also
    // while this instance was down (a NOTIFY from the trigger would serialise writers' commits).
    // While no hook is enabled nothing can arrive, and the poll rests (IDLE_CHECK_MS).
    this.running = true;
    this.sweep = setInterval(() => void this.gate.due().then((due) => due && this.kick()), this.opts.pollMs);
    this.kick();
  }

  async stop(): Promise<void> {
    if (this.sweep) clearInterval(this.sweep);
    this.running = false;
    await this.relaying;
  }

  /** Runs the relay now, or once more after the current pass. */
  private kick(): void {
    if (this.relaying) {
      this.again = true;
      return;
    }
    this.relaying = (async () => {
      do {
        this.again = false;
        try {
          while ((await this.relay()) === RELAY_BATCH);
        } catch (err) {
          this.opts.log('warn', 'webhooks: the relay failed', { err: errorText(err) });
        }
      } while (this.again && this.running);
    })().finally(() => (this.relaying = null));
  }

  /** Moves a batch of outbox rows to the delivery log and enqueues them, in one transaction. */
  private async relay(): Promise<number> {
    const jobs = this.need();
    if (await jobs.full()) return 0;
    return this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `with batch as (
           delete from webhooks.outbox where id in (select id from webhooks.outbox order by id limit $2 for update skip locked)
           returning hook_id, payload, created_at)
         insert into webhooks.deliveries (hook_id, event, payload, committed_at)
         select b.hook_id, b.payload->>'type',
                case when octet_length(b.payload::text) > $1
                     then jsonb_build_object('type', b.payload->'type', 'table', b.payload->'table', 'schema', b.payload->'schema',
                                             'record', null, 'old_record', null, 'truncated', true)
                     else b.payload end,
                b.created_at
           from batch b join webhooks.hooks h on h.id = b.hook_id
         returning id`,
        [this.opts.maxPayloadBytes, RELAY_BATCH],
      );
      await jobs.sendMany(
        DELIVERY_QUEUE,
        rows.map((r) => ({ deliveryId: r.id })),
        this.policy(),
        tx,
      );
      return rows.length;
    });
  }

  private policy() {
    return {
      retryLimit: this.opts.maxAttempts - 1,
      retryDelaySeconds: this.opts.retryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: Math.ceil(this.opts.timeoutMs / 1000) + 5,
    };
  }

  /** One attempt of one delivery; a failure that has attempts left throws, so the job library retries it later. */
  private async deliver(job: JobContext<{ deliveryId: string }>): Promise<unknown> {
    const id = job.data.deliveryId;
    const { rows } = await this.deps.db.query<{
      body: string;
      url: string | null;
      function_slug: string | null;
      secret: string;
      enabled: boolean;
      hook_id: string;
    }>(
      // The attempt is counted before it is made: one cut by a crash (kill -9) still counts.
      `update webhooks.deliveries d set attempts = d.attempts + 1
         from webhooks.hooks h
        where h.id = d.hook_id and d.id = $1 and d.status = 'pending'
        returning d.payload::text as body, d.hook_id, h.url, h.function_slug, h.secret, h.enabled`,
      [id],
    );
    const d = rows[0];
    if (!d) return null;
    const hook = { id: d.hook_id, url: d.url, functionSlug: d.function_slug, secret: d.secret, enabled: d.enabled };
    let status: number | null = null;
    let answer: string | null = null;
    let error: string | null = null;
    if (!hook.enabled) error = 'The webhook is disabled.';
    else {
      try {
        ({ status, body: answer } = await this.send(hook, id, d.body));
        if (status < 200 || status >= 300) error = `The receiver answered ${status}.`;
      } catch (err) {
        error = errorText(err);
      }
    }
    const ok = error === null;
    const last = !hook.enabled || job.retryCount + 1 >= this.opts.maxAttempts;
    await this.deps.db.query(
      `update webhooks.deliveries set response_status = $2, response_body = $3, error = $4,
              status = $5, delivered_at = case when $5 = 'succeeded' then clock_timestamp() end where id = $1`,
      [id, status, answer, error, ok ? 'succeeded' : last ? 'failed' : 'pending'],
    );
    const fields = { hookId: hook.id, deliveryId: id, attempt: job.retryCount + 1, status };
    if (ok) this.opts.log('info', 'webhooks: delivered', fields);
    else if (!last) this.opts.log('info', 'webhooks: a delivery failed, to be retried', { ...fields, error });
    else this.opts.log('warn', 'webhooks: a delivery failed for good', { ...fields, error });
    if (!ok && !last) throw new Error(error!);
    return null;
  }

  /** The signed POST to the hook's URL, or its function called as the admin. */
  private async send(
    hook: { url: string | null; functionSlug: string | null; secret: string },
    id: string,
    body: string,
  ): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Plinth-Webhooks',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    };
    headers['webhook-signature'] = new Webhook(hook.secret).sign(
      id,
      new Date(Number(headers['webhook-timestamp']) * 1000),
      body,
    );
    if (hook.url) {
      return outboundFetch(
        hook.url,
        { method: 'POST', headers, body, timeoutMs: this.opts.timeoutMs, maxBodyBytes: RESPONSE_BYTES },
        this.deps.policy,
        this.deps.dispatcher,
      );
    }
    const slug = hook.functionSlug!;
    const res = await this.deps.functions.invoke(slug, {
      method: 'POST',
      url: `${this.deps.publicUrl ?? 'http://localhost'}/functions/${slug}`,
      headers: { ...headers, 'x-plinth-role': 'admin' },
      body: Readable.from([Buffer.from(body)]),
    });
    let text = '';
    if (Buffer.isBuffer(res.body)) text = res.body.subarray(0, RESPONSE_BYTES).toString();
    else for await (const c of res.body) if (text.length < RESPONSE_BYTES) text += String(c);
    return { status: res.status, body: text.slice(0, RESPONSE_BYTES) };
  }

  private async target(input: HookInput): Promise<void> {
    if (input.url) {
      const refused = refuseUrl(input.url, this.deps.policy);
      if (refused) throw new AppError('OUTBOUND_NOT_ALLOWED', { message: `The URL ${refused}.` });
    }
    if (input.functionSlug) {
      const found = await this.deps.db.query('select 1 from functions.functions where slug = $1', [input.functionSlug]);
      if (!found.rows.length)
        throw new AppError('FUNCTION_NOT_FOUND', { message: `No function with slug "${input.functionSlug}".` });
    }
  }

  async create(input: HookInput): Promise<Hook & { secret: string }> {
    this.need();
    const table = checkIdent(input.table!, 'table name');
    if (!(await this.store.tableExists(table)))
      throw new AppError('TABLE_NOT_FOUND', { message: `No table "${table}" in schema public.` });
    if (Boolean(input.url) === Boolean(input.functionSlug))
      throw new AppError('INVALID_INPUT', { message: 'A webhook has exactly one target: url or functionSlug.' });
    await this.target(input);
    for (const c of input.columns ?? []) checkIdent(c, 'column name');
    const row: HookRow = {
      name: input.name!,
      table,
      events: input.events!,
      columns: input.columns ?? null,
      url: input.url ?? null,
      functionSlug: input.functionSlug ?? null,
      enabled: input.enabled ?? true,
    };
    const hook = await this.store.insert(row);
    this.gate.wake();
    return hook;
  }

  async update(id: string, patch: HookInput): Promise<Hook> {
    await this.get(id);
    if (patch.url && patch.functionSlug)
      throw new AppError('INVALID_INPUT', { message: 'A webhook has exactly one target: url or functionSlug.' });
    await this.target(patch);
    const row: Partial<HookRow> = {
      name: patch.name,
      events: patch.events,
      columns: patch.columns,
      enabled: patch.enabled,
    };
    if (patch.url) Object.assign(row, { url: patch.url, functionSlug: null });
    if (patch.functionSlug) Object.assign(row, { functionSlug: patch.functionSlug, url: null });
    const hook = (await this.store.update(id, row)) ?? this.notFound(id);
    this.gate.wake();
    return hook;
  }

  async get(id: string): Promise<Hook> {
    return (await this.store.get(id)) ?? this.notFound(id);
  }

  list(): Promise<Hook[]> {
    return this.store.list();
  }

  async remove(id: string): Promise<void> {
    if (!(await this.store.remove(id))) this.notFound(id);
  }

  async deliveries(id: string, limit = 50, offset = 0): Promise<Delivery[]> {
    await this.get(id);
    return this.store.deliveries(id, limit, offset);
  }

  /** Sends a delivery's payload again as a new delivery (its own id, signature and attempts). */
  async redeliver(hookId: string, deliveryId: string): Promise<Delivery> {
    const hook = await this.get(hookId);
    if (!hook.enabled) throw new AppError('WEBHOOK_DISABLED');
    const jobs = this.need();
    if (await jobs.full()) throw new AppError('QUEUE_FULL');
    return this.deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `insert into webhooks.deliveries (hook_id, event, payload, redelivery_of, committed_at)
         select hook_id, event, payload, id, committed_at from webhooks.deliveries where hook_id = $1 and id = $2 returning id`,
        [hookId, deliveryId],
      );
      if (!rows[0])
        throw new AppError('DELIVERY_NOT_FOUND', { message: `No delivery "${deliveryId}" of this webhook.` });
      await jobs.sendMany(DELIVERY_QUEUE, [{ deliveryId: rows[0].id }], this.policy(), tx);
      return (await this.store.delivery(hookId, rows[0].id, tx))!;
    });
  }

  private notFound(id: string): never {
    throw new AppError('WEBHOOK_NOT_FOUND', { message: `No webhook with id "${id}".` });
  }
}
