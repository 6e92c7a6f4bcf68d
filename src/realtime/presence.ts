import type { Identity } from '../auth/identity.js';
import type { Db } from '../db/types.js';
import { callerClaims, queryAsCaller } from '../database/caller.js';

/**
 * Presence rules. A channel shows presence only when it asks for it (a broadcast channel
 * whose enabled realtime.channels pattern has `presence` on; table channels never), and then
 * a viewer sees a member only when the viewer's SELECT policies on realtime.messages pass the
 * member's presence image: {channel, event: 'presence', sender_type, sender_id: the member}.
 * A viewer always sees itself; admins see everyone.
 */

/** The image of a member's presence that the viewer's policies judge. */
export function presenceImage(channel: string, member: Identity): string {
  return JSON.stringify({
    channel,
    event: 'presence',
    sender_type: member.kind === 'admin' ? 'system' : 'user',
    sender_id: member.kind === 'user' ? member.userId : null,
  });
}

/** Which of `members` the viewer may see on the channel (same order). */
export async function visibleTo(db: Db, viewer: Identity, channel: string, members: Identity[]): Promise<boolean[]> {
  if (viewer.kind === 'admin' || members.length === 0) return members.map(() => true);
  const images = JSON.stringify(members.map((m) => JSON.parse(presenceImage(channel, m))));
  const { rows } = await queryAsCaller<{ ok: boolean[] }>(
    db,
    viewer,
    `select realtime.allowed('realtime.messages'::regclass, 'select', img) as ok
       from jsonb_array_elements($1::jsonb) with ordinality as t(img, n) order by n`,
    [images],
  );
  return members.map((m, i) => isSelf(viewer, m) || rows[i]?.ok?.[0] === true);
}

type UserIdentity = Identity & { kind: 'user' };

/**
 * Which viewers may see one member's presence (same order): at most two queries, one as anon
 * and one as role authenticated for every user at once (each with their own claims).
 */
export async function viewersOf(db: Db, member: Identity, channel: string, viewers: Identity[]): Promise<boolean[]> {
  const out = viewers.map((v) => v.kind === 'admin' || isSelf(v, member));
  const image = presenceImage(channel, member);
  const ask = async (caller: Identity, claims: string[] | null) => {
    const { rows } = await queryAsCaller<{ ok: boolean[] }>(
      db,
      caller,
      `select realtime.allowed('realtime.messages'::regclass, 'select', $1::jsonb, $2::text[]) as ok`,
      [image, claims],
    );
    return rows[0]?.ok ?? [];
  };
  const anon = viewers.findIndex((v) => v.kind === 'anon');
  if (anon >= 0) {
    const [ok] = await ask(viewers[anon]!, null);
    viewers.forEach((v, i) => v.kind === 'anon' && (out[i] = out[i] || ok === true));
  }
  const users = viewers
    .map((v, i) => [v, i] as const)
    .filter((x): x is readonly [UserIdentity, number] => x[0].kind === 'user');
  if (users.length > 0) {
    const caller: UserIdentity = { ...users[0]![0], sessionChecked: true };
    const ok = await ask(
      caller,
      users.map(([u]) => callerClaims(u)),
    );
    users.forEach(([, i], n) => (out[i] = out[i] || ok[n] === true));
  }
  return out;
}

function isSelf(a: Identity, b: Identity): boolean {
  return a.kind === 'user' && b.kind === 'user' && a.userId === b.userId;
}
