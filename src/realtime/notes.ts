import type { Queryable } from '../db/types.js';

/** The NOTIFY channel every realtime signal travels on (see the 0080 migration). */
export const NOTIFY_CHANNEL = 'plinth_realtime';

export type Row = Record<string, unknown>;
export type Op = 'INSERT' | 'UPDATE' | 'DELETE';

/** A row changed in a table with realtime on (trigger realtime.notify_change). */
export interface ChangeNote {
  k: 'change';
  table: string;
  op: Op;
  /** The primary key column named when realtime was turned on, or null. */
  pk: string | null;
  new: Row | null;
  old: Row | null;
  id: string;
  at: string;
}

/** A message published with realtime.publish(channel, event, payload). */
export interface MessageNote {
  k: 'msg';
  channel: string;
  event: string;
  payload: Row;
  id: string;
  at: string;
}

/** A session ended (signed out, revoked, its user deleted). */
export interface SessionNote {
  k: 'session';
  sid: string;
}

export type Note = ChangeNote | MessageNote | SessionNote;

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses one notification; a reference to realtime.overflow (a body over the NOTIFY limit)
 * is read from the table. Null for anything that is not a known signal.
 */
export async function readNote(db: Queryable, raw: string): Promise<Note | null> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(body)) return null;
  if (body.k === 'ref') {
    const { rows } = await db.query<{ body: unknown }>('select body from realtime.overflow where id = $1', [
      Number(body.id),
    ]);
    body = rows[0]?.body;
    if (typeof body === 'string') body = JSON.parse(body);
    if (!isObject(body)) return null;
  }
  if (body.k === 'session' && typeof body.sid === 'string') return body as unknown as SessionNote;
  if (
    body.k === 'msg' &&
    typeof body.channel === 'string' &&
    typeof body.event === 'string' &&
    isObject(body.payload)
  ) {
    return body as unknown as MessageNote;
  }
  if (
    body.k === 'change' &&
    typeof body.table === 'string' &&
    ['INSERT', 'UPDATE', 'DELETE'].includes(body.op as string)
  ) {
    return body as unknown as ChangeNote;
  }
  return null;
}

/** The channels a change is published on: `table:<t>`, and `table:<t>:<key>` (old and new key). */
export function changeChannels(note: ChangeNote): string[] {
  const channels = [`table:${note.table}`];
  if (note.pk) {
    for (const row of [note.new, note.old]) {
      const v = row?.[note.pk];
      if (v !== undefined && v !== null) {
        const c = `table:${note.table}:${String(v)}`;
        if (!channels.includes(c)) channels.push(c);
      }
    }
  }
  return channels;
}

/** The table of a channel changeChannels() publishes on (`table:<t>`, `table:<t>:<key>`), or null. */
export function changeChannelTable(channel: string): string | null {
  if (!channel.startsWith('table:')) return null;
  const rest = channel.slice('table:'.length);
  const at = rest.indexOf(':');
  return at < 0 ? rest : rest.slice(0, at);
}
