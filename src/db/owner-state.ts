// What system.ensure_owner_role() and system.ensure_authenticator_role() read and set, as one
// digest: the start skips both (and the two password changes) when the catalogue is as the last
// start left it. They re-grant and rewrite every role setting and password at each call, 100–150 ms
// of a start's critical path at load ≈ 8 (docs/benchmarks.md, branch start40); the digest is one
// read of the catalogue, a few milliseconds.
import type { Queryable } from './types.js';

/** Where the digest of the last start's state is kept (system.credentials: the superuser's alone). */
export const OWNER_STATE_KEY = 'owner_roles_state';

/** The schemas whose objects' owners and privileges the functions change or read: every one but Postgres's own. */
const OURS = `select oid from pg_catalog.pg_namespace where nspname !~ '^pg_' and nspname <> 'information_schema'`;

/**
 * The digest, over: the roles ($1) with their attributes and password verifiers (a changed
 * password is a new verifier, and each ALTER ROLE … PASSWORD makes a new one); their memberships;
 * the database's, the schemas', the relations', columns' and functions' owners and privileges;
 * the types of public; the roles' settings in this database (and in all); the two functions' own code (a
 * migration that changes them runs them again); the passwords kept in system.credentials. An
 * object made in public since (to be moved to the owner) is a new row, so a new digest.
 */
const STATE_SQL = `select md5(string_agg(part, E'\\n' order by part)) as state from (
  select concat_ws(' ', 'role', a.rolname, a.rolsuper, a.rolinherit, a.rolcreaterole, a.rolcreatedb, a.rolcanlogin,
                   a.rolreplication, a.rolbypassrls, a.rolpassword)
    from pg_catalog.pg_authid a where a.rolname = any($1::text[])
  union all
  select concat_ws(' ', 'member', m.roleid, m.member, m.admin_option)
    from pg_catalog.pg_auth_members m join pg_catalog.pg_authid a on a.oid = m.member where a.rolname = any($1::text[])
  union all
  select concat_ws(' ', 'database', d.datacl::text) from pg_catalog.pg_database d where d.datname = current_database()
  union all
  select concat_ws(' ', 'schema', n.oid, n.nspowner, n.nspacl::text) from pg_catalog.pg_namespace n where n.oid in (${OURS})
  union all
  select concat_ws(' ', 'relation', c.oid, c.relkind, c.relowner, c.relacl::text)
    from pg_catalog.pg_class c where c.relnamespace in (${OURS}) and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
  union all
  select concat_ws(' ', 'column', t.attrelid, t.attnum, t.attacl::text) from pg_catalog.pg_attribute t where t.attacl is not null
  union all
  select concat_ws(' ', 'function', p.oid, p.prokind, p.proowner, p.proacl::text)
    from pg_catalog.pg_proc p where p.pronamespace in (${OURS})
  union all
  select concat_ws(' ', 'type', y.oid, y.typtype, y.typowner) from pg_catalog.pg_type y where y.typnamespace = 'public'::regnamespace
  union all
  select concat_ws(' ', 'setting', s.setdatabase, s.setrole, s.setconfig::text) from pg_catalog.pg_db_role_setting s
   where s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
  union all
  select concat_ws(' ', 'code', p.oid, md5(p.prosrc)) from pg_catalog.pg_proc p
   where p.oid in ('system.ensure_owner_role()'::regprocedure, 'system.ensure_authenticator_role()'::regprocedure)
  union all
  select concat_ws(' ', 'password', c.name, c.value) from system.credentials c
   where c.name in ('owner_password', 'authenticator_password')
) parts(part)`;

/** The digest of the roles' state now. */
export async function ownerState(tx: Queryable, roles: string[]): Promise<string> {
  const { rows } = await tx.query<{ state: string }>(STATE_SQL, [roles]);
  return rows[0]!.state;
}

/** The digest the last start stored, or null. */
export async function storedOwnerState(tx: Queryable): Promise<string | null> {
  const { rows } = await tx.query<{ value: string }>('select value from system.credentials where name = $1', [
    OWNER_STATE_KEY,
  ]);
  return rows[0]?.value ?? null;
}

/** Keeps `state` as the one this start left. */
export async function storeOwnerState(tx: Queryable, state: string): Promise<void> {
  await tx.query(
    `insert into system.credentials (name, value) values ($1, $2)
     on conflict (name) do update set value = excluded.value, updated_at = now()`,
    [OWNER_STATE_KEY, state],
  );
}
