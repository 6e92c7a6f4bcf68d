// Carries a PGlite data dir (the default before the embedded server) into the embedded
// cluster once: roles, then a pg_dump of the whole database (PGlite's WASM pg_dump), restored
// in one transaction. The old dir is renamed, never deleted.
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openPglite } from '../pglite.js';
import type { Db } from '../types.js';
import { EmbeddedPostgresError } from './binaries.js';

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

interface RoleRow {
  rolname: string;
  rolcanlogin: boolean;
  rolinherit: boolean;
  rolbypassrls: boolean;
  rolcreatedb: boolean;
  rolcreaterole: boolean;
}

/** The script that recreates PGlite's own roles (not the built-in ones) and their memberships. */
async function rolesScript(src: Db): Promise<string> {
  const { rows } = await src.query<RoleRow>(
    `select rolname, rolcanlogin, rolinherit, rolbypassrls, rolcreatedb, rolcreaterole
       from pg_roles where rolname !~ '^pg_' and rolname <> 'postgres' and not rolsuper order by rolname`,
  );
  const lines = rows.map((r) => {
    const attrs = [
      r.rolcanlogin ? 'login' : 'nologin',
      r.rolinherit ? 'inherit' : 'noinherit',
      r.rolbypassrls ? 'bypassrls' : 'nobypassrls',
      r.rolcreatedb ? 'createdb' : 'nocreatedb',
      r.rolcreaterole ? 'createrole' : 'nocreaterole',
    ].join(' ');
    const lit = `'${r.rolname.replace(/'/g, "''")}'`;
    return `do $$ begin if not exists (select 1 from pg_roles where rolname = ${lit}) then create role ${quoteIdent(r.rolname)} ${attrs}; end if; end $$;`;
  });
  const members = await src.query<{ role: string; member: string }>(
    `select r.rolname as role, m.rolname as member from pg_auth_members a
       join pg_roles r on r.oid = a.roleid join pg_roles m on m.oid = a.member
      where r.rolname !~ '^pg_' and r.rolname <> 'postgres'`,
  );
  for (const m of members.rows) lines.push(`grant ${quoteIdent(m.role)} to ${quoteIdent(m.member)};`);
  return lines.join('\n');
}

/** pg_dump of the PGlite database as plain SQL with INSERTs (no COPY: one simple-query script). */
async function dumpPglite(dir: string): Promise<{ roles: string; dump: string }> {
  const src = await openPglite(dir);
  try {
    const roles = await rolesScript(src);
    const { PGlite } = await import('@electric-sql/pglite');
    const { pgDump } = await import('@electric-sql/pglite-tools/pg_dump');
    // pg_dump needs the PGlite instance itself: reopen the dir with the raw class.
    await src.close();
    const pgl = await PGlite.create(dir);
    try {
      const file = await pgDump({ pg: pgl, args: ['--inserts', '--no-owner', '--quote-all-identifiers'] });
      // Drop psql meta-commands (\restrict, \unrestrict): the script is run by the server.
      const dump = (await file.text())
        .split('\n')
        .filter((l) => !l.startsWith('\\'))
        .join('\n');
      return { roles, dump };
    } finally {
      await pgl.close();
    }
  } finally {
    await src.close();
  }
}

/**
 * Copies `DATA_DIR/pglite` into the database at `url` (an empty database on a fresh cluster)
 * and renames the old dir to `pglite.migrated-<date>`. On failure the caller removes the
 * new cluster so the next start tries again; the PGlite dir is untouched.
 */
export async function carryOverPglite(opts: { dataDir: string; url: string; now?: Date }): Promise<string> {
  const from = path.join(opts.dataDir, 'pglite');
  let roles: string;
  let dump: string;
  try {
    ({ roles, dump } = await dumpPglite(from));
  } catch (err) {
    throw new EmbeddedPostgresError(
      `Could not read the PGlite data in ${from} to carry it over (${err instanceof Error ? err.message : String(err)}). ` +
        'Start with DATABASE_URL=pglite:// to keep using it as it is.',
      { cause: err },
    );
  }
  const c = new pg.Client({ connectionString: opts.url });
  await c.connect();
  try {
    await c.query(roles);
    // Several statements and no parameters: one implicit transaction, all or nothing.
    await c.query(`begin;\n${dump}\ncommit;`);
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw new EmbeddedPostgresError(
      `Carrying the PGlite data in ${from} over to the embedded Postgres failed: ${err instanceof Error ? err.message : String(err)}. ` +
        'Nothing was changed in the PGlite dir; start with DATABASE_URL=pglite:// to keep using it, and report this.',
      { cause: err },
    );
  } finally {
    await c.end();
  }
  const stamp = (opts.now ?? new Date()).toISOString().replace(/[:.]/g, '-');
  const to = `${from}.migrated-${stamp}`;
  renameSync(from, to);
  return to;
}

/** Removes a cluster dir this start created (after a failed carry-over). */
export function removeNewCluster(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
