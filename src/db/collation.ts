import type { Queryable } from './types.js';

/**
 * Whether the database sorts text by bytes (collation `C`/`POSIX`, and PGlite): then
 * `order=name` puts "Shopping" before "alice". The embedded server uses ICU's root collation;
 * a server at DATABASE_URL keeps the collation it was created with, so the server warns at start.
 */
export async function sortsTextByBytes(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ bytes: boolean }>(`select 'a'::text > 'B'::text as bytes`);
  return rows[0]?.bytes === true;
}

/** What the start warning says to do about a byte-order database. */
export const BYTE_ORDER_ADVICE =
  'The database sorts text by bytes (collation C), so order=name puts "Shopping" before "alice". ' +
  "For the order people expect, create the database with ICU's root collation: " +
  "CREATE DATABASE app TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' (Postgres 15+; docs/database.md).";
