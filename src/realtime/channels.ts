import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import { queryAsCaller } from '../database/caller.js';
import { isIdent, qualified } from '../database/ident.js';
import { rtError, type RealtimeError } from './errors.js';

/** Channel names: 1 to 255 printable ASCII characters, no spaces. */
const NAME = /^[\x21-\x7e]{1,255}$/;

/** `table:<t>` carries every change of table t; `table:<t>:<key>` the changes of one row. */
export type Channel =
  | { kind: 'table'; name: string; table: string; key: string | null }
  | { kind: 'broadcast'; name: string };

/** Parses a channel name a client sent; null when it is not a valid name. */
export function parseChannel(name: unknown): Channel | null {
  if (typeof name !== 'string' || !NAME.test(name)) return null;
  if (!name.startsWith('table:')) return { kind: 'broadcast', name };
  const rest = name.slice('table:'.length);
  const at = rest.indexOf(':');
  const table = at < 0 ? rest : rest.slice(0, at);
  const key = at < 0 ? null : rest.slice(at + 1);
  if (!isIdent(table) || key === '') return null;
  return { kind: 'table', name, table, key };
}

/** What a caller may do on a channel, or why not. */
export type Grant = { ok: true; publish: boolean; presence: boolean } | { ok: false; error: RealtimeError };

const SENDER = (identity: Identity) =>
  JSON.stringify({
    sender_type: identity.kind === 'admin' ? 'system' : 'user',
    sender_id: identity.kind === 'user' ? identity.userId : null,
  });

/**
 * Channel authorization, decided in Postgres as the caller (queryAsCaller: role and claims, one round trip):
 * - `table:<t>`: the table has realtime on and the caller holds SELECT on it (rows are then
 *   filtered per change by the table's policies, see changes.ts); nobody publishes there.
 * - broadcast channels: the name matches an enabled pattern of realtime.channels, and the
 *   row image (channel, sender) passes the SELECT policies of realtime.messages (subscribe)
 *   and its INSERT policies (publish). No policy, no access. Admins may do anything.
 * - presence: only on broadcast channels whose pattern has it on (see presence.ts).
 */
export class ChannelAuthz {
  constructor(private readonly db: Db) {}

  async check(identity: Identity, channel: Channel): Promise<Grant> {
    if (channel.kind === 'table') return this.table(identity, channel.table);
    if (identity.kind === 'admin') {
      const { rows } = await this.db.query<{ presence: boolean }>('select realtime.channel_presence($1) as presence', [
        channel.name,
      ]);
      return { ok: true, publish: true, presence: rows[0]?.presence === true };
    }
    const image = JSON.stringify({ ...JSON.parse(SENDER(identity)), channel: channel.name });
    const { rows } = await queryAsCaller<{ enabled: boolean; presence: boolean; sub: boolean[]; pub: boolean[] }>(
      this.db,
      identity,
      `select realtime.channel_enabled($1) as enabled, realtime.channel_presence($1) as presence,
         realtime.allowed('realtime.messages'::regclass, 'select', $2::jsonb) as sub,
         realtime.allowed('realtime.messages'::regclass, 'insert', $2::jsonb) as pub`,
      [channel.name, image],
    );
    const r = rows[0]!;
    if (!r.enabled) {
      return {
        ok: false,
        error: rtError(
          'CHANNEL_NOT_FOUND',
          `No enabled channel pattern matches "${channel.name}"; an admin adds one to realtime.channels.`,
        ),
      };
    }
    if (!r.sub[0]) {
      return {
        ok: false,
        error: rtError('SUBSCRIBE_DENIED', 'No SELECT policy on realtime.messages lets you subscribe to this channel.'),
      };
    }
    return { ok: true, publish: r.pub[0] === true, presence: r.presence === true };
  }

  /** Whether the caller may publish on a channel it has not subscribed to. */
  async canPublish(identity: Identity, channel: Channel): Promise<Grant> {
    if (channel.kind === 'table')
      return { ok: false, error: rtError('PUBLISH_DENIED', 'Table channels carry database changes only.') };
    const g = await this.check(identity, channel);
    if (g.ok && !g.publish)
      return {
        ok: false,
        error: rtError('PUBLISH_DENIED', 'No INSERT policy on realtime.messages lets you publish on this channel.'),
      };
    if (!g.ok && g.error.code === 'SUBSCRIBE_DENIED')
      return {
        ok: false,
        error: rtError('PUBLISH_DENIED', 'No INSERT policy on realtime.messages lets you publish on this channel.'),
      };
    return g;
  }

  private async table(identity: Identity, table: string): Promise<Grant> {
    const { rows } = await queryAsCaller<{ enabled: boolean; can: boolean }>(
      this.db,
      identity,
      `select exists (select 1 from pg_trigger where tgrelid = to_regclass($1) and tgname = 'plinth_realtime') as enabled,
         coalesce(has_table_privilege(to_regclass($1), 'select'), false) as can`,
      [qualified(table)],
    );
    const r = rows[0]!;
    if (!r.enabled) {
      return {
        ok: false,
        error: rtError(
          'CHANNEL_NOT_FOUND',
          `Realtime is not on for table "${table}": an admin turns it on with POST /api/database/tables/${table}/realtime.`,
        ),
      };
    }
    if (!r.can)
      return { ok: false, error: rtError('SUBSCRIBE_DENIED', `Your role may not select from table "${table}".`) };
    // Table channels never show presence: who watches a table is nobody else's business.
    return { ok: true, publish: false, presence: false };
  }
}
