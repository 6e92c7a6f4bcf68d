import type { Identity } from '../auth/identity.js';
import { statement, type Db } from '../db/types.js';
import { callerClaims, queryAsCaller } from '../database/caller.js';
import { qualified } from '../database/ident.js';
import type { ChangeNote, Op, Row } from './notes.js';

/** What one viewer receives of a change. */
export interface ChangeView {
  type: Op;
  table: string;
  record: Row | null;
  old_record: Row | null;
  /** Set on the delete-like event of an update that took the row out of the viewer's sight. */
  reason?: 'not_visible';
}

/**
 * Viewers whose RLS answers are the same: one per user (role authenticated, claims of that
 * user), one for anon, one for admins. Sessions of one user share their key.
 */
export function viewerKey(identity: Identity): string {
  return identity.kind === 'user' ? `user:${identity.userId}` : identity.kind;
}

type UserIdentity = Identity & { kind: 'user' };

/**
 * RLS-exact views of one change for every viewer group, in at most two queries (one as anon,
 * one as role authenticated for all users at once): realtime.allowed() evaluates the table's
 * SELECT policies on the new and on the old row image, as the caller, each user with their
 * own claims. Admins see everything. The rule per viewer:
 *   insert: the new row visible → INSERT
 *   update: new visible → UPDATE (old_record only when the old row was visible too);
 *           only the old one visible → a DELETE with reason "not_visible" (the row left)
 *   delete: the old row visible → DELETE
 * Anything else: the viewer gets nothing.
 */
export async function viewsOf(
  db: Db,
  note: ChangeNote,
  viewers: Map<string, Identity>,
): Promise<Map<string, ChangeView | null>> {
  const out = new Map<string, ChangeView | null>();
  // Viewers with the same answers share one view object, so the hub sends it once to all
  // their sockets (encoded once) instead of once per user.
  const shared = new Map<string, ChangeView | null>();
  const view = (n: boolean, o: boolean) => {
    const k = `${n}${o}`;
    let v = shared.get(k);
    if (v === undefined) shared.set(k, (v = viewOf(note, n, o)));
    return v;
  };
  const users: UserIdentity[] = [];
  const tbl = qualified(note.table);
  for (const [key, identity] of viewers) {
    if (identity.kind === 'admin') out.set(key, view(true, true));
    else if (identity.kind === 'user') users.push(identity);
    else if (identity.kind === 'anon') {
      const [n, o] = await allowed(db, identity, tbl, note, null);
      out.set(key, view(n[0] === true, o[0] === true));
    }
  }
  if (users.length > 0) {
    const caller: UserIdentity = { ...users[0]!, sessionChecked: true };
    const [n, o] = await allowed(
      db,
      caller,
      tbl,
      note,
      users.map((u) => callerClaims(u)),
    );
    users.forEach((u, i) => out.set(viewerKey(u), view(n[i] === true, o[i] === true)));
  }
  return out;
}

// The new and the old row image against the table's SELECT policies, for every viewer at once.
const ALLOWED =
  statement(`select case when $2::jsonb is null then null else realtime.allowed(to_regclass($1), 'select', $2::jsonb, $4::text[]) end as n,
        case when $3::jsonb is null then null else realtime.allowed(to_regclass($1), 'select', $3::jsonb, $4::text[]) end as o`);

async function allowed(
  db: Db,
  caller: Identity,
  tbl: string,
  note: ChangeNote,
  claims: string[] | null,
): Promise<[boolean[], boolean[]]> {
  const { rows } = await queryAsCaller<{ n: boolean[] | null; o: boolean[] | null }>(db, caller, ALLOWED, [
    tbl,
    json(note.new),
    json(note.old),
    claims,
  ]);
  return [rows[0]?.n ?? [], rows[0]?.o ?? []];
}

const json = (row: Row | null) => (row === null ? null : JSON.stringify(row));

function viewOf(note: ChangeNote, newVisible: boolean, oldVisible: boolean): ChangeView | null {
  const base = { table: note.table };
  if (note.op === 'INSERT') return newVisible ? { ...base, type: 'INSERT', record: note.new, old_record: null } : null;
  if (note.op === 'DELETE') return oldVisible ? { ...base, type: 'DELETE', record: null, old_record: note.old } : null;
  if (newVisible) return { ...base, type: 'UPDATE', record: note.new, old_record: oldVisible ? note.old : null };
  if (oldVisible) return { ...base, type: 'DELETE', record: null, old_record: note.old, reason: 'not_visible' };
  return null;
}
