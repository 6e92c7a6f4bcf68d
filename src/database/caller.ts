import { AppError } from '../errors/index.js';
import { sessionEnded, type Identity } from '../auth/identity.js';
import { statement, type Db, type Queryable, type QueryResult, type Statement } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';

/** Longest a user or anon statement may run (57014 → 503 QUERY_TIMEOUT). */
export const STATEMENT_TIMEOUT = '30s';

// The claims text of each frozen identity (IdentityResolver shares one per verified token).
const claimsText = new WeakMap<Identity, string>();

/** The `request.jwt.claims` a user or anon caller runs with (what auth.uid() and auth.jwt() read). */
export function callerClaims(identity: Identity & { kind: 'user' | 'anon' }): string {
  if (identity.kind !== 'user') return '{"role":"anon"}';
  let text = claimsText.get(identity);
  if (text === undefined) {
    text = JSON.stringify({ ...identity.claims, sub: identity.userId, email: identity.email, role: 'authenticated' });
    if (Object.isFrozen(identity)) claimsText.set(identity, text);
  }
  return text;
}

// The caller's setup, run first in every transaction of a user or anon (prepared where the
// engine allows): the role, the claims, the claims' `sub` on its own (as PostgREST sets
// request.jwt.claim.sub: auth.uid() reads it without parsing the claims JSON, once per row
// of a policy), the statement timeout and the app's search_path (the owner role's: Plinth's
// own connection resolves names in pg_catalog only, src/db/postgres.ts).
const SETUP_STATEMENT = statement(
  `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true), set_config('statement_timeout', $3, true), set_config('request.jwt.claim.sub', $4, true), set_config('search_path', '"$user", public, plinth_extensions', true)`,
);
// A user's session not checked yet is checked right behind it, in the same round trip, as the
// caller (the login before the setup may read nothing: migration 0420). An ended session fails
// it (1 / 0: division_by_zero, which nothing else in it can raise), so the transaction is
// aborted before any statement of the caller runs, also those already sent behind it.
const SESSION_CHECK = statement('select 1 / auth.session_live($1, $2)::int as live');
const SESSION_ENDED = '22012';

/**
 * Runs `fn` as the caller, in one transaction: users as role `authenticated`, the anon key
 * as `anon`, both with `request.jwt.claims` set so policies can use auth.uid(); admins as
 * the owner role (bypassing RLS). Role and claims are transaction-local, so they are gone
 * when the connection returns to the pool, whatever `fn` did. The one place that does this.
 * `db` is the owner role's pool: users and anon run on its `callers`, the authenticator's
 * pool, when there is one (src/db/owner.ts), admins on the owner's own.
 * `pipeline` (statements Plinth builds, one command each): on a server the setup is written
 * with the transaction's `begin`, and `fn`'s statements without waiting for the setup's
 * answer; they run only if it succeeded, as the transaction is aborted otherwise. On the
 * authenticator's pool they leave with the `begin` too (one round trip: if it were refused,
 * they would run as the authenticator, which can do nothing); elsewhere only once it was
 * answered. `adminSql`: `fn` runs SQL an admin wrote (POST /api/database/sql/as), which could
 * change the session (a SET ROLE that outlives the transaction): on the owner's pool, guarded.
 */
export async function withCaller<T>(
  db: Db,
  identity: Identity,
  fn: (tx: Queryable) => Promise<T>,
  opts: { pipeline?: boolean; adminSql?: boolean } = {},
): Promise<T> {
  if (identity.kind === 'none') throw new AppError('UNAUTHORIZED');
  // A function's token is not a database caller (only the routes made for functions take it).
  if (identity.kind === 'function') throw new AppError('FORBIDDEN');
  const pool = identity.kind === 'admin' || opts.adminSql ? db : (db.callers ?? db);
  return pool.transaction(async (tx) => {
    if (identity.kind === 'admin') return fn(tx);
    const setup = callerSetup(tx, identity);
    if (!(opts.pipeline && db.kind === 'postgres')) {
      await setup;
      return fn(tx);
    }
    setup.catch(() => {}); // awaited below, after fn's statements were sent
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      await setup; // a failed setup is the cause of fn's failure
      throw err;
    }
    await setup;
    return result;
  });
}

/**
 * One statement as the caller, in one round trip on a server: the transaction's `begin`, the
 * caller's setup, the statement and the `commit` behind it leave in one write (withCaller's
 * `pipeline`, the statement `last`), where a transaction of several awaited statements waits
 * for each answer before the next (realtime checks a change before sending it: issue #38).
 * The same transaction, so the same guarantees: the setup is transaction-local and ends with
 * it, and a failed setup aborts the transaction before the statement runs. For a statement
 * Plinth writes (one command); on PGlite it runs as withCaller does.
 */
export function queryAsCaller<T>(
  db: Db,
  identity: Identity,
  sql: string | Statement,
  params: readonly unknown[],
): Promise<QueryResult<T>> {
  return withCaller(db, identity, (tx) => tx.query<T>(sql, params, { last: true }), { pipeline: true });
}

/**
 * Sets the caller's role, claims and timeout. set_config(..., true) is SET LOCAL: every
 * setting ends with the transaction. The statement timeout keeps one client's expensive
 * filter from holding a connection. A user's session not checked yet is checked here, in the
 * same round trip; an ended one is AUTH_UNAUTHORIZED.
 */
async function callerSetup(tx: Queryable, identity: Identity & { kind: 'user' | 'anon' }): Promise<void> {
  const role = identity.kind === 'user' ? 'authenticated' : 'anon';
  const claims = callerClaims(identity);
  const sub = identity.kind === 'user' ? identity.userId : '';
  // SET LOCAL only: on its own (a failed begin) it sets nothing that lasts.
  const setup = tx.query(SETUP_STATEMENT, [role, claims, STATEMENT_TIMEOUT, sub], { beforeBegin: true });
  const check =
    identity.kind === 'user' && !identity.sessionChecked
      ? tx.query(SESSION_CHECK, [identity.sessionId, identity.userId], { beforeBegin: true })
      : null;
  check?.catch(() => {}); // awaited below, after the setup (whose failure is the cause of its own)
  await setup;
  try {
    await check;
  } catch (err) {
    if (pgErrorInfo(err instanceof AppError ? err.cause : err)?.code === SESSION_ENDED) throw sessionEnded();
    throw err;
  }
}
