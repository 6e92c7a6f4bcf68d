import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';

/** Secret names are environment variable names. */
export const SECRET_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
export const MAX_SECRET_BYTES = 64 * 1024;

/** The expression of the stamp of all secrets: changes with any name, value or scope. */
const STAMP = `coalesce(md5(string_agg(name || '=' || md5(value) || coalesce(array_to_string(functions, ','), '*'), ';' order by name)), '')`;

/** A secret as the API shows it: never the value, only a masked preview. */
export interface SecretInfo {
  name: string;
  preview: string;
  /** Slugs of the functions that may read it; null: every function. */
  functions: string[] | null;
  created_at: string;
  updated_at: string;
}

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

/** "sk_live_abcdef123" → "sk••••••••"; short values show nothing. */
export function maskSecret(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 2)}${'•'.repeat(8)}` : '•'.repeat(8);
}

function info(row: Record<string, unknown>): SecretInfo {
  return {
    name: String(row.name),
    preview: maskSecret(String(row.value)),
    functions: Array.isArray(row.functions) ? row.functions.map(String) : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/**
 * Project-wide secrets in functions.secrets, handed to function workers as their env.
 * Stored as given: the schema is private to the server's own role (anon and authenticated
 * have no access), like the rest of Plinth's system tables.
 */
export class SecretStore {
  constructor(private readonly db: Queryable) {}

  async list(): Promise<SecretInfo[]> {
    const { rows } = await this.db.query(
      'select name, value, functions, created_at, updated_at from functions.secrets order by name',
    );
    return rows.map(info);
  }

  async get(name: string): Promise<SecretInfo> {
    const { rows } = await this.db.query(
      'select name, value, functions, created_at, updated_at from functions.secrets where name = $1',
      [name],
    );
    if (!rows[0]) throw new AppError('SECRET_NOT_FOUND', { message: `No secret named "${name}".` });
    return info(rows[0]);
  }

  /** Creates or replaces (value and scope); `created` tells which. */
  async put(
    name: string,
    value: string,
    functions: string[] | null = null,
  ): Promise<{ secret: SecretInfo; created: boolean }> {
    const { rows } = await this.db.query(
      `insert into functions.secrets (name, value, functions) values ($1, $2, $3::text[])
       on conflict (name) do update set value = excluded.value, functions = excluded.functions, updated_at = now()
       returning name, value, functions, created_at, updated_at, (xmax = 0) as created`,
      [name, value, functions],
    );
    return { secret: info(rows[0]!), created: rows[0]!.created === true };
  }

  async remove(name: string): Promise<void> {
    const { rowCount } = await this.db.query('delete from functions.secrets where name = $1', [name]);
    if (!rowCount) throw new AppError('SECRET_NOT_FOUND', { message: `No secret named "${name}".` });
  }

  /** The secrets a function may read (unscoped ones and those naming it), with values. */
  async valuesFor(slug: string): Promise<Record<string, string>> {
    const { rows } = await this.db.query<{ name: string; value: string }>(
      'select name, value from functions.secrets where functions is null or $1 = any(functions)',
      [slug],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.value]));
  }

  /** Changes whenever a secret is added, changed or removed. */
  async stamp(): Promise<string> {
    const { rows } = await this.db.query<{ stamp: string }>(`select ${STAMP} as stamp from functions.secrets`);
    return rows[0]?.stamp ?? '';
  }

  /** The stamp and the secrets a function may read, read together in one statement (one snapshot). */
  async snapshot(slug: string): Promise<{ stamp: string; values: Record<string, string> }> {
    const { rows } = await this.db.query<{ stamp: string; values: Record<string, string> }>(
      `select ${STAMP} as stamp,
              coalesce(jsonb_object_agg(name, value) filter (where functions is null or $1 = any(functions)), '{}') as values
         from functions.secrets`,
      [slug],
    );
    return { stamp: rows[0]?.stamp ?? '', values: rows[0]?.values ?? {} };
  }
}
