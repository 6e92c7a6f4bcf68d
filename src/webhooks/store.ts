import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../db/types.js';
import { quoteIdent } from '../database/ident.js';
import { iso } from '../schedules/store.js';

export type HookEvent = 'INSERT' | 'UPDATE' | 'DELETE';

/** A hook as the API shows it; the signing secret only once, at creation. */
export interface Hook {
  id: string;
  name: string;
  table: string;
  events: HookEvent[];
  columns: string[] | null;
  url: string | null;
  functionSlug: string | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Delivery {
  id: string;
  hookId: string;
  event: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  redeliveryOf: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

const HOOK_COLUMNS = `id, name, table_name as "table", events, columns, url, function_slug as "functionSlug", enabled, created_at as "createdAt", updated_at as "updatedAt"`;
const DELIVERY_COLUMNS = `id, hook_id as "hookId", event, status, attempts, response_status as "responseStatus", response_body as "responseBody", error,
  redelivery_of as "redeliveryOf", created_at as "createdAt", delivered_at as "deliveredAt"`;

/** A new signing secret in the Standard Webhooks form: "whsec_" and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The triggers on a hooked table exist while at least one hook names it: INSERT and DELETE
 * statement-level with transition tables (one set-based outbox insert per statement), UPDATE
 * row-level (the column filter needs each row's old and new values); migration 0215.
 */
async function syncTrigger(tx: Queryable, table: string): Promise<void> {
  const { rows } = await tx.query('select 1 from webhooks.hooks where schema_name = $1 and table_name = $2 limit 1', [
    'public',
    table,
  ]);
  const target = `public.${quoteIdent(table)}`;
  const exists = await tx.query(
    `select 1 from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relname = $1 and t.tgname = 'plinth_webhooks'`,
    [table],
  );
  if (rows.length && !exists.rows.length) {
    await tx.query(
      `create trigger plinth_webhooks after update on ${target} for each row execute function webhooks.capture()`,
    );
    await tx.query(
      `create trigger plinth_webhooks_insert after insert on ${target} referencing new table as plinth_new for each statement execute function webhooks.capture_insert()`,
    );
    await tx.query(
      `create trigger plinth_webhooks_delete after delete on ${target} referencing old table as plinth_old for each statement execute function webhooks.capture_delete()`,
    );
  } else if (!rows.length && exists.rows.length) {
    for (const name of ['plinth_webhooks', 'plinth_webhooks_insert', 'plinth_webhooks_delete'])
      await tx.query(`drop trigger if exists ${name} on ${target}`);
  }
}

export interface HookRow {
  name: string;
  table: string;
  events: HookEvent[];
  columns: string[] | null;
  url: string | null;
  functionSlug: string | null;
  enabled: boolean;
}

export class HookStore {
  constructor(private readonly db: Db) {}

  async tableExists(table: string): Promise<boolean> {
    const { rows } = await this.db.query(`select 1 from pg_tables where schemaname = 'public' and tablename = $1`, [
      table,
    ]);
    return rows.length > 0;
  }

  async insert(row: HookRow): Promise<Hook & { secret: string }> {
    const secret = newSecret();
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<Hook>(
        `insert into webhooks.hooks (name, table_name, events, columns, url, function_slug, enabled, secret)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${HOOK_COLUMNS}`,
        [row.name, row.table, row.events, row.columns, row.url, row.functionSlug, row.enabled, secret],
      );
      await syncTrigger(tx, row.table);
      return { ...iso(rows[0]!), secret };
    });
  }

  async update(id: string, row: Partial<HookRow>): Promise<Hook | null> {
    const { rows } = await this.db.query<Hook>(
      `update webhooks.hooks set name = coalesce($2, name), events = coalesce($3, events), columns = case when $4::boolean then $5 else columns end,
              url = case when $6::boolean then $7 else url end, function_slug = case when $6::boolean then $8 else function_slug end,
              enabled = coalesce($9, enabled), updated_at = now()
        where id = $1 returning ${HOOK_COLUMNS}`,
      [
        id,
        row.name ?? null,
        row.events ?? null,
        row.columns !== undefined,
        row.columns ?? null,
        row.url !== undefined || row.functionSlug !== undefined,
        row.url ?? null,
        row.functionSlug ?? null,
        row.enabled ?? null,
      ],
    );
    return rows[0] ? iso(rows[0]) : null;
  }

  async get(id: string): Promise<Hook | null> {
    const { rows } = await this.db.query<Hook>(`select ${HOOK_COLUMNS} from webhooks.hooks where id = $1`, [id]);
    return rows[0] ? iso(rows[0]) : null;
  }

  /** The hook with its secret, for signing a delivery. */
  async withSecret(id: string): Promise<(Hook & { secret: string }) | null> {
    const { rows } = await this.db.query<Hook & { secret: string }>(
      `select ${HOOK_COLUMNS}, secret from webhooks.hooks where id = $1`,
      [id],
    );
    return rows[0] ? iso(rows[0]) : null;
  }

  async list(): Promise<Hook[]> {
    const { rows } = await this.db.query<Hook>(`select ${HOOK_COLUMNS} from webhooks.hooks order by created_at, id`);
    return rows.map(iso);
  }

  async remove(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ table_name: string }>(
        'delete from webhooks.hooks where id = $1 returning table_name',
        [id],
      );
      if (!rows[0]) return false;
      await syncTrigger(tx, rows[0].table_name);
      return true;
    });
  }

  async deliveries(hookId: string, limit: number, offset: number): Promise<Delivery[]> {
    const { rows } = await this.db.query<Delivery>(
      `select ${DELIVERY_COLUMNS} from webhooks.deliveries where hook_id = $1 order by created_at desc, id limit $2 offset $3`,
      [hookId, limit, offset],
    );
    return rows.map(iso);
  }

  async delivery(hookId: string, id: string, tx: Queryable = this.db): Promise<Delivery | null> {
    const { rows } = await tx.query<Delivery>(
      `select ${DELIVERY_COLUMNS} from webhooks.deliveries where hook_id = $1 and id = $2`,
      [hookId, id],
    );
    return rows[0] ? iso(rows[0]) : null;
  }

  /**
   * Whether a relay has nothing to do and nothing can arrive: no enabled hook (the triggers
   * write outbox rows only for enabled ones) and an empty outbox.
   */
  async nothingToRelay(): Promise<boolean> {
    const { rows } = await this.db.query<{ idle: boolean }>(
      `select not exists (select 1 from webhooks.hooks where enabled) and not exists (select 1 from webhooks.outbox) as idle`,
    );
    return rows[0]?.idle === true;
  }

  /** Deletes deliveries older than `days` and outbox rows of hooks that no longer exist. */
  async prune(days: number): Promise<number> {
    const a = await this.db.query(
      `delete from webhooks.deliveries where created_at < now() - make_interval(days => $1)`,
      [days],
    );
    return a.rowCount;
  }
}
