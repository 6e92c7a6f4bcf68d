// The authenticator (migration 0420, src/db/owner.ts): the login users' and anon's
// transactions run on. It can do nothing itself, which is what lets a transaction's `begin`,
// setup, statement and `commit` leave in one write (src/db/postgres.ts, src/database/caller.ts).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Identity } from '../../src/auth/identity.js';
import { withCaller } from '../../src/database/caller.js';
import { migrate } from '../../src/db/migrate.js';
import { authenticatorRoleName, openOwner, ownerRoleName, type Owner } from '../../src/db/owner.js';
import type { Db } from '../../src/db/types.js';
import { openPglite } from '../../src/db/pglite.js';
import { freshDb } from '../helpers/db.js';

const anon: Identity = { kind: 'anon' };
const user: Identity = {
  kind: 'user',
  userId: '00000000-0000-4000-8000-000000000001',
  email: 'a@example.com',
  sessionId: '',
  claims: { sub: '00000000-0000-4000-8000-000000000001', email: 'a@example.com' } as never,
  sessionChecked: true,
};

/** Makes every `begin` fail as a cancel would, without reaching the server; records what was written. */
async function withBeginRefused<T>(fn: (sent: string[]) => Promise<T>): Promise<T> {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text === 'begin' || text === 'begin read only')
      return Promise.reject(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
    if (text) sent.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return await fn(sent);
  } finally {
    pg.Client.prototype.query = original;
  }
}

describe.each(['embedded', 'postgres'] as const)('the authenticator (%s)', (backend) => {
  let fresh: Awaited<ReturnType<typeof freshDb>>;
  let db: Db;
  let owner: Owner;
  let callers: Db;
  let login: pg.Client;
  let name: string;
  const count = async () => (await db.query<{ n: number }>('select count(*)::int as n from public.open_t')).rows[0]!.n;

  beforeAll(async () => {
    fresh = await freshDb(backend);
    db = fresh.db;
    await migrate(db);
    owner = await openOwner(db);
    callers = owner.db.callers!;
    name = new URL(fresh.url).pathname.slice(1);
    // A table anon and users may read and write, RLS off; and one they may not touch.
    await owner.db.exec(`create table public.open_t (n int);
      grant select, insert, update, delete on public.open_t to anon, authenticated;
      create table public.closed_t (n int); insert into public.closed_t values (1);
      create function public.owner_only() returns int language sql as 'select 1';
      revoke execute on function public.owner_only() from public;`);
    const password = (
      await db.query<{ value: string }>(`select value from system.credentials where name = 'authenticator_password'`)
    ).rows[0]!.value;
    const u = new URL(fresh.url);
    u.username = authenticatorRoleName(name);
    u.password = password;
    login = new pg.Client({ connectionString: u.toString() });
    await login.connect();
  });
  afterAll(async () => {
    await login?.end().catch(() => {});
    await owner?.db.close();
    await fresh?.drop();
  });

  it('is a separate pool beside the owner; a caller runs as its role on it, an admin as the owner', async () => {
    expect(callers).toBeDefined();
    const as = (who: Identity) =>
      withCaller(
        owner.db,
        who,
        async (tx) =>
          (await tx.query<{ u: string; s: string }>('select current_user as u, session_user as s')).rows[0]!,
      );
    expect(await as(user)).toEqual({ u: 'authenticated', s: authenticatorRoleName(name) });
    expect(await as(anon)).toEqual({ u: 'anon', s: authenticatorRoleName(name) });
    expect(await as({ kind: 'admin' } as Identity)).toEqual({ u: ownerRoleName(name), s: ownerRoleName(name) });
  });

  it('a caller whose begin is refused: the statement is written with it and writes nothing', async () => {
    const before = await count();
    for (const who of [anon, user]) {
      await withBeginRefused(async (sent) => {
        await expect(
          withCaller(
            owner.db,
            who,
            async (tx) => {
              await tx.query('insert into public.open_t values (4) returning n', [], { last: true });
            },
            { pipeline: true },
          ),
        ).rejects.toThrow();
        // One round trip: the statement left without waiting for the begin's answer ...
        expect(sent).toContain('insert into public.open_t values (4) returning n');
      });
    }
    // ... and ran as the authenticator, outside any transaction, which may write nothing.
    expect(await count()).toBe(before);
    // The same insert in a transaction that began is the caller's to make.
    await withCaller(owner.db, anon, (tx) => tx.query('insert into public.open_t values (5)'), { pipeline: true });
    expect(await count()).toBe(before + 1);
  });

  const refused: Array<[string, string]> = [
    ['reading a table anon may read, RLS off', 'select * from public.open_t'],
    ['writing it', 'insert into public.open_t values (1)'],
    ['reading a table of the owner', 'select * from public.closed_t'],
    ['reading auth.users', 'select id from auth.users'],
    ['reading Plinth credentials', 'select value from system.credentials'],
    ['calling a function anon may not', 'select public.owner_only()'],
    ['creating a table in public', 'create table public.mine (n int)'],
    ['becoming the owner', 'set role OWNER'],
    ['becoming a superuser', 'set role postgres'],
  ];
  it.each(refused)('logged in alone, it is refused %s', async (_what, sql) => {
    await expect(login.query(sql.replace('OWNER', ownerRoleName(name)))).rejects.toMatchObject({ code: '42501' });
  });

  it('holds no privilege beyond what anon holds, and is a member of anon and authenticated only', async () => {
    const me = authenticatorRoleName(name);
    const { rows } = await db.query<Record<string, unknown>>(
      `select r.rolinherit, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls, r.rolreplication,
         (select array_agg(g.rolname::text order by g.rolname) from pg_auth_members m join pg_roles g on g.oid = m.roleid where m.member = r.oid) as member_of,
         (select count(*)::int from pg_proc p where has_function_privilege(r.oid, p.oid, 'execute') and not has_function_privilege('anon', p.oid, 'execute')) as functions,
         (select count(*)::int from pg_class c where c.relnamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
            and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
            and (has_table_privilege(r.oid, c.oid, 'select, insert, update, delete, truncate, references, trigger')
              or (c.relkind = 'S' and has_sequence_privilege(r.oid, c.oid, 'usage, select, update')))) as relations,
         (select count(*)::int from pg_namespace n where has_schema_privilege(r.oid, n.oid, 'create')) as schemas_create,
         (select count(*)::int from pg_namespace n where has_schema_privilege(r.oid, n.oid, 'usage') and not has_schema_privilege('anon', n.oid, 'usage')) as schemas_usage
       from pg_roles r where r.rolname = $1`,
      [me],
    );
    expect(rows[0]).toEqual({
      rolinherit: false,
      rolsuper: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolbypassrls: false,
      rolreplication: false,
      member_of: ['anon', 'authenticated'],
      functions: 0,
      relations: 0,
      schemas_create: 0,
      schemas_usage: 0,
    });
  });

  it('a connection goes back to the pool as the authenticator, whatever the transaction before it did', async () => {
    await expect(
      withCaller(owner.db, user, (tx) => tx.query('select 1 / 0', [], { last: true }), { pipeline: true }),
    ).rejects.toThrow();
    await withBeginRefused(async () => {
      await expect(withCaller(owner.db, anon, (tx) => tx.query('select 1'), { pipeline: true })).rejects.toThrow();
    });
    for (let i = 0; i < 12; i++) {
      const { rows } = await callers.query<{ u: string; claims: string | null }>(
        `select current_user as u, nullif(current_setting('request.jwt.claims', true), '') as claims`,
      );
      expect(rows[0]).toEqual({ u: authenticatorRoleName(name), claims: null });
    }
  });
});

describe('without a separate login (PGlite)', () => {
  it('makes no authenticator: callers run on the one pool, their statements after the begin is answered', async () => {
    const db = await openPglite(null);
    try {
      await migrate(db);
      const owner = await openOwner(db);
      expect(owner.separate).toBe(false);
      expect(owner.db.callers).toBeUndefined();
      const { rows } = await withCaller(owner.db, anon, (tx) => tx.query<{ u: string }>('select current_user as u'), {
        pipeline: true,
      });
      expect(rows[0]!.u).toBe('anon');
    } finally {
      await db.close();
    }
  });
});
