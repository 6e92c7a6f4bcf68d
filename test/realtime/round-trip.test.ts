// A change is checked as its viewers in one round trip to Postgres (issue #38: the check is on
// the path of every delivery): the transaction's begin, the caller's setup, realtime.allowed()
// and the commit leave in one write. The setup stays the transaction's: nothing of a viewer's
// role or claims is left on the pooled connection, and a denied viewer gets nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Identity } from '../../src/auth/identity.js';
import { migrate } from '../../src/db/migrate.js';
import { authenticatorRoleName, openOwner, type Owner } from '../../src/db/owner.js';
import { ChannelAuthz, parseChannel } from '../../src/realtime/channels.js';
import { viewerKey, viewsOf } from '../../src/realtime/changes.js';
import type { ChangeNote } from '../../src/realtime/notes.js';
import { backends, freshDb } from '../helpers/db.js';

const userOf = (n: number): Identity & { kind: 'user' } => {
  const id = `00000000-0000-4000-8000-00000000000${n}`;
  return {
    kind: 'user',
    userId: id,
    email: `u${n}@example.com`,
    sessionId: '',
    claims: { sub: id, email: `u${n}@example.com` } as never,
    sessionChecked: true,
  };
};
const [a, b] = [userOf(1), userOf(2)];

type Event = { client: pg.Client; kind: 'sent' | 'answered'; text: string };

/** Records, per connection, when each statement was written and when it was answered. */
async function timeline<T>(fn: () => Promise<T>): Promise<{ result: T; events: Event[] }> {
  const original = pg.Client.prototype.query;
  const events: Event[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    events.push({ client: this, kind: 'sent', text });
    const out = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (out instanceof Promise)
      out.then(
        () => events.push({ client: this, kind: 'answered', text }),
        () => events.push({ client: this, kind: 'answered', text }),
      );
    return out;
  } as typeof original;
  try {
    return { result: await fn(), events };
  } finally {
    pg.Client.prototype.query = original;
  }
}

/** Round trips on the connection that ran `marker`: runs of statements written before an answer came. */
function roundTrips(events: Event[], marker: string): { trips: number; texts: string[] } {
  const client = events.find((e) => e.kind === 'sent' && e.text.includes(marker))?.client;
  const mine = events.filter((e) => e.client === client);
  let trips = 0;
  let last: Event['kind'] | null = null;
  for (const e of mine) {
    if (e.kind === 'sent' && last !== 'sent') trips++;
    last = e.kind;
  }
  return { trips, texts: mine.filter((e) => e.kind === 'sent').map((e) => e.text) };
}

describe.each(backends())('realtime checks in one round trip (%s)', (backend) => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let owner: Owner;
  const note = (ownerId: string): ChangeNote => ({
    k: 'change',
    table: 'rt_notes',
    op: 'INSERT',
    pk: 'id',
    new: { id: 1, owner: ownerId, body: 'x' },
    old: null,
    id: 'n1',
    at: new Date().toISOString(),
  });

  beforeAll(async () => {
    fresh = await freshDb(backend);
    await migrate(fresh.db);
    // One connection for callers: every check and the probe after it share it.
    owner = await openOwner(fresh.db, { callersMax: 1 });
    await owner.db.exec(`create table public.rt_notes (id int primary key, owner uuid not null, body text);
      alter table public.rt_notes enable row level security;
      grant select on public.rt_notes to authenticated;
      create trigger plinth_realtime after insert or update or delete on public.rt_notes
        for each row execute function realtime.notify_change('id');
      create policy mine on public.rt_notes for select to authenticated using (owner = (select auth.uid()));`);
  });
  afterAll(async () => {
    await owner?.db.close();
    await fresh?.drop();
  });

  it('checks a change for every viewer in one round trip; each sees only what their policy shows', async () => {
    const viewers = new Map<string, Identity>([a, b].map((u) => [viewerKey(u), u]));
    const { result, events } = await timeline(() => viewsOf(owner.db, note(a.userId), viewers));
    expect(result.get(viewerKey(a))).toMatchObject({ type: 'INSERT', record: { id: 1, owner: a.userId } });
    // The denied viewer receives nothing.
    expect(result.get(viewerKey(b))).toBeNull();
    const { trips, texts } = roundTrips(events, 'realtime.allowed');
    expect(texts[0]).toBe('begin');
    expect(texts.at(-1)).toBe('commit');
    expect(trips).toBe(1);
  });

  it('subscribing checks the channel in one round trip', async () => {
    const authz = new ChannelAuthz(owner.db);
    const { result, events } = await timeline(() => authz.check(a, parseChannel('table:rt_notes')!));
    expect(result).toEqual({ ok: true, publish: false, presence: false });
    expect(roundTrips(events, 'has_table_privilege').trips).toBe(1);
  });

  it('leaves neither role nor claims on the pooled connection, also after a check that failed', async () => {
    const probe = () =>
      owner.db.callers!.query<{ u: string; claims: string | null; sub: string | null }>(
        `select current_user as u, nullif(current_setting('request.jwt.claims', true), '') as claims,
           nullif(current_setting('request.jwt.claim.sub', true), '') as sub`,
      );
    const clean = { u: authenticatorRoleName(new URL(fresh.url).pathname.slice(1)), claims: null, sub: null };
    await viewsOf(owner.db, note(b.userId), new Map([[viewerKey(b), b as Identity]]));
    expect((await probe()).rows[0]).toEqual(clean);
    // A policy that fails as it is evaluated: the check fails, and the connection is clean after it.
    await owner.db.exec(
      `create policy boom on public.rt_notes as restrictive for select to authenticated using (1 / (id - 1) = 1)`,
    );
    try {
      await expect(viewsOf(owner.db, note(a.userId), new Map([[viewerKey(a), a as Identity]]))).rejects.toThrow();
    } finally {
      await owner.db.exec('drop policy boom on public.rt_notes');
    }
    expect((await probe()).rows[0]).toEqual(clean);
  });
});
