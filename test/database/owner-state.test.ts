// The start's owner-role step (src/db/owner.ts, src/db/owner-state.ts): skipped when the
// catalogue is as the last start left it, run again when anything it sets has changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { authenticatorRoleName, openOwner, ownerRoleName } from '../../src/db/owner.js';
import type { Db } from '../../src/db/types.js';
import { freshDb } from '../helpers/db.js';

describe.each(['embedded', 'postgres'] as const)('the owner roles at start (%s)', (backend) => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let db: Db;
  let owner: string;
  /** The owner's password verifier: each ALTER ROLE … PASSWORD writes a new one (a new salt). */
  const verifier = async (role: string) =>
    (await db.query<{ v: string }>('select rolpassword as v from pg_authid where rolname = $1', [role])).rows[0]!.v;
  /** Opens the owner's pools as a start does, and closes them. */
  const start = async () => {
    const o = await openOwner(db);
    expect(o.separate).toBe(true);
    await o.db.close();
  };
  const may = async (privilege: string) =>
    (await db.query<{ ok: boolean }>('select has_schema_privilege($1, $2, $3) as ok', [owner, 'storage', privilege]))
      .rows[0]!.ok;

  beforeAll(async () => {
    fresh = await freshDb(backend);
    db = fresh.db;
    await migrate(db);
    owner = ownerRoleName(new URL(fresh.url).pathname.slice(1));
    await start();
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it('leaves the roles alone on a start after one that changed nothing', async () => {
    const name = new URL(fresh.url).pathname.slice(1);
    const [o, a] = [await verifier(owner), await verifier(authenticatorRoleName(name))];
    await start();
    expect(await verifier(owner)).toBe(o);
    expect(await verifier(authenticatorRoleName(name))).toBe(a);
  });

  it('grants again what the owner lost, and logs in with the stored password', async () => {
    await db.exec(`revoke usage on schema storage from ${owner}`);
    expect(await may('usage')).toBe(false);
    const before = await verifier(owner);
    await start();
    expect(await may('usage')).toBe(true);
    expect(await verifier(owner)).not.toBe(before);
    // The next start has nothing to do again.
    const after = await verifier(owner);
    await start();
    expect(await verifier(owner)).toBe(after);
  });

  it('moves to the owner a table the superuser made in public since, and sets a changed password back', async () => {
    await db.exec(`create table public.made_by_superuser (n int)`);
    await db.exec(`alter role ${owner} password 'changed-by-hand'`);
    await start(); // logs in as the owner: the stored password is set back
    const r = await db.query<{ o: string }>(
      `select relowner::regrole::text as o from pg_class where oid = 'public.made_by_superuser'::regclass`,
    );
    expect(r.rows[0]!.o).toBe(owner);
  });
});
