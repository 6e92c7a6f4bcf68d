import { AppError } from '../errors/index.js';
import { pgErrorInfo } from '../db/errors.js';
import type { Queryable } from '../db/types.js';

export type FunctionStatus = 'draft' | 'active' | 'error';

/** One import of a saved version and what it resolved to at deploy (`npm:zod@3` → `npm:zod@3.25.76`). */
export interface Dependency {
  specifier: string;
  resolved: string;
}

/** What a save stores besides the source: the bundle the runtime loads (null: compile the source), and its dependencies. */
export interface Artifact {
  bundle: string | null;
  dependencies: Dependency[];
}

/** A function as the API returns it (the list leaves `code` out). */
export interface FunctionRecord {
  id: string;
  slug: string;
  name: string;
  description: string;
  code?: string;
  status: FunctionStatus;
  created_at: string;
  updated_at: string;
  deployed_at: string | null;
  /** The imports of the saved code, resolved at deploy. */
  dependencies: Dependency[];
}

/** What an invocation needs to find: enough to decide whether and which version runs. */
export interface FunctionHead {
  id: string;
  status: FunctionStatus;
  /** Changes with every save of the function. */
  stamp: string;
}

const COLUMNS = 'id, slug, name, description, status, created_at, updated_at, deployed_at, dependencies';
/** The head's stamp: updated_at in microseconds, as text. */
const STAMP = '(extract(epoch from updated_at) * 1000000)::bigint::text as stamp';

/** A saved function, and its head as an invocation finds it (no second read to learn it). */
export interface Saved {
  record: FunctionRecord;
  head: FunctionHead;
}

function saved(row: Record<string, unknown>): Saved {
  const record = toRecord(row);
  return { record, head: { id: record.id, status: record.status, stamp: String(row.stamp) } };
}

const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

function toRecord(row: Record<string, unknown>): FunctionRecord {
  const rec: FunctionRecord = {
    id: String(row.id),
    slug: String(row.slug),
    name: String(row.name),
    description: String(row.description),
    status: row.status as FunctionStatus,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    deployed_at: row.deployed_at == null ? null : iso(row.deployed_at),
    dependencies: Array.isArray(row.dependencies) ? (row.dependencies as Dependency[]) : [],
  };
  if (typeof row.code === 'string') rec.code = row.code;
  return rec;
}

function notFound(slug: string): AppError {
  return new AppError('FUNCTION_NOT_FOUND', { message: `No function with slug "${slug}".` });
}

/** Function rows in functions.functions. Raw parameterised SQL, nothing else. */
export class FunctionStore {
  constructor(private readonly db: Queryable) {}

  async list(): Promise<FunctionRecord[]> {
    const { rows } = await this.db.query(`select ${COLUMNS} from functions.functions order by created_at, slug`);
    return rows.map(toRecord);
  }

  async get(slug: string): Promise<FunctionRecord> {
    const { rows } = await this.db.query(`select ${COLUMNS}, code from functions.functions where slug = $1`, [slug]);
    if (!rows[0]) throw notFound(slug);
    return toRecord(rows[0]);
  }

  /**
   * A draft has no deployed_at; an active function is deployed now. A taken slug is a 409.
   * The id is chosen by the caller (its code was loaded under it before it was stored).
   */
  async create(f: {
    id: string;
    slug: string;
    name: string;
    description: string;
    code: string;
    status: 'draft' | 'active';
    artifact: Artifact;
  }): Promise<Saved> {
    try {
      const { rows } = await this.db.query(
        `insert into functions.functions (id, slug, name, description, code, status, deployed_at, bundle, dependencies)
         values ($1, $2, $3, $4, $5, $6, case when $6 = 'active' then now() end, $7, $8::jsonb)
         returning ${COLUMNS}, code, ${STAMP}`,
        [
          f.id,
          f.slug,
          f.name,
          f.description,
          f.code,
          f.status,
          f.artifact.bundle,
          JSON.stringify(f.artifact.dependencies),
        ],
      );
      return saved(rows[0]!);
    } catch (err) {
      if (err instanceof AppError && pgErrorInfo(err.cause)?.code === '23505') {
        throw new AppError('ALREADY_EXISTS', {
          message: `A function with slug "${f.slug}" already exists.`,
          nextActions: 'Pick another slug (or name), or update the existing function with PUT /api/functions/{slug}.',
        });
      }
      throw err;
    }
  }

  /**
   * Applies the given fields. deployed_at moves to now when the function becomes active or
   * its code changes while active; it keeps its last value otherwise. New code comes with its
   * artifact, and all three are replaced in the one statement (concurrent saves: the last wins whole).
   */
  async update(
    slug: string,
    patch: { name?: string; description?: string; code?: string; status?: FunctionStatus },
    artifact: Artifact | null = null,
  ): Promise<Saved> {
    const { rows } = await this.db.query(
      `update functions.functions set
         name = coalesce($2, name),
         description = coalesce($3, description),
         code = coalesce($4, code),
         bundle = case when $4::text is null then bundle else $6 end,
         dependencies = case when $4::text is null then dependencies else coalesce($7::jsonb, '[]'::jsonb) end,
         status = coalesce($5, status),
         updated_at = now(),
         deployed_at = case
           when coalesce($5, status) = 'active' and (status <> 'active' or ($4::text is not null and $4::text <> code)) then now()
           else deployed_at end
       where slug = $1
       returning ${COLUMNS}, code, ${STAMP}`,
      [
        slug,
        patch.name ?? null,
        patch.description ?? null,
        patch.code ?? null,
        patch.status ?? null,
        artifact?.bundle ?? null,
        artifact ? JSON.stringify(artifact.dependencies) : null,
      ],
    );
    if (!rows[0]) throw notFound(slug);
    return saved(rows[0]);
  }

  async remove(slug: string): Promise<void> {
    const { rowCount } = await this.db.query('delete from functions.functions where slug = $1', [slug]);
    if (!rowCount) throw notFound(slug);
  }

  async head(slug: string): Promise<FunctionHead | null> {
    const { rows } = await this.db.query<{ id: string; status: FunctionStatus; stamp: string }>(
      `select id, status, ${STAMP} from functions.functions where slug = $1`,
      [slug],
    );
    return rows[0] ?? null;
  }

  /** The current source of a function and its bundle, if it has one (null when it was deleted). */
  async code(id: string): Promise<{ code: string; bundle: string | null } | null> {
    const { rows } = await this.db.query<{ code: string; bundle: string | null }>(
      'select code, bundle from functions.functions where id = $1',
      [id],
    );
    return rows[0] ?? null;
  }
}
