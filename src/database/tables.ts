import { AppError } from '../errors/index.js';
import type { Db, Queryable } from '../db/types.js';
import { pgErrorInfo, translatePgError } from '../db/errors.js';
import { checkIdent, qualified, safe } from './ident.js';
import { AUTO_COLUMNS, createTableSql, type ColumnDef } from './ddl.js';
import type { ColumnMeta, SchemaCache, TableMeta } from './schema.js';
import { planAlter, type SchemaChanges } from './alter.js';
import { listPolicies, type Policy } from './policies.js';
import { sqlPosition } from './sql-position.js';

/** The table schema as the API returns it. */
export interface TableSchema {
  tableName: string;
  rlsEnabled: boolean;
  columns: Array<Pick<ColumnMeta, 'name' | 'type' | 'nullable' | 'unique' | 'default' | 'isPrimaryKey' | 'foreignKey'>>;
}

export type { SchemaChanges } from './alter.js';

const MAX_COLUMNS = 500;

/** Refines DDL errors by SQLSTATE into API errors (never by message text). */
function translateDdl(err: unknown): unknown {
  const info = pgErrorInfo(err instanceof AppError ? err.cause : err);
  if (!info || err instanceof AppError) return err;
  switch (info.code) {
    case '42P07':
      return new AppError('TABLE_EXISTS', { cause: err });
    case '42701':
    case '42710':
      return new AppError('ALREADY_EXISTS', { message: 'A column or constraint with this name already exists.', cause: err });
    case '42P01':
      return new AppError('INVALID_INPUT', { message: 'A referenced table does not exist.', cause: err });
    case '42703':
      return new AppError('UNKNOWN_COLUMN', { message: 'A referenced column does not exist.', cause: err });
    case '2BP01':
      return new AppError('CONFLICT', {
        message: 'Other objects depend on this table or column (for example a foreign key or a policy).',
        nextActions: 'Drop the foreign keys or policies that depend on it first.',
        cause: err,
      });
  }
  if (info.code.startsWith('42')) {
    return new AppError('INVALID_INPUT', {
      message: 'The schema change is not valid (for example a foreign key between columns of different types, or to a column that is not unique).',
      cause: err,
    });
  }
  return err;
}

/** Table management of schema public (admin). Every change refreshes the schema cache. */
export class TablesService {
  constructor(
    private readonly db: Db,
    private readonly schema: SchemaCache,
  ) {}

  async list(): Promise<string[]> {
    const { rows } = await this.db.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'p') order by 1`,
    );
    return rows.map((r) => r.name);
  }

  private async table(name: string): Promise<TableMeta> {
    const t = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name) ? await this.schema.get(name) : null;
    if (!t || !t.isTable) throw new AppError('TABLE_NOT_FOUND', { message: `No table "${safe(name)}".` });
    return t;
  }

  /** The table's RLS policies; TABLE_NOT_FOUND for an unknown table. */
  async policies(name: string): Promise<{ tableName: string; rlsEnabled: boolean; policies: Policy[] }> {
    const t = await this.table(name);
    return { tableName: t.name, rlsEnabled: t.rlsEnabled, policies: await listPolicies(this.db, t.name) };
  }

  async describe(name: string): Promise<TableSchema> {
    const t = await this.table(name);
    return {
      tableName: t.name,
      rlsEnabled: t.rlsEnabled,
      columns: t.columnList.map((c) => ({
        name: c.name,
        type: c.type,
        nullable: c.nullable,
        unique: c.unique,
        default: c.default,
        isPrimaryKey: c.isPrimaryKey,
        foreignKey: c.foreignKey,
      })),
    };
  }

  /** Runs DDL statements in one transaction, then refreshes the cache. */
  private async ddl<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(fn);
    } catch (err) {
      throw translateDdl(err);
    } finally {
      this.schema.invalidate();
    }
  }

  async create(input: { tableName: string; rlsEnabled?: boolean; columns: ColumnDef[] }): Promise<void> {
    const name = checkIdent(input.tableName, 'table name');
    if (input.columns.length > MAX_COLUMNS) throw new AppError('INVALID_INPUT', { message: `At most ${MAX_COLUMNS} columns.` });
    const seen = new Set<string>();
    const columns: ColumnDef[] = [];
    for (const c of input.columns) {
      checkIdent(c.name, 'column name');
      if (seen.has(c.name)) throw new AppError('INVALID_INPUT', { message: `Column "${c.name}" is defined twice.` });
      seen.add(c.name);
      const auto = AUTO_COLUMNS[c.name];
      if (auto) {
        // id, created_at and updated_at are always created; a matching definition is accepted and ignored.
        if (c.type === auto) continue;
        throw new AppError('INVALID_INPUT', { message: `Column "${c.name}" is created automatically as ${auto}.` });
      }
      if (c.foreignKey) {
        checkIdent(c.foreignKey.table, 'foreign key table');
        checkIdent(c.foreignKey.column, 'foreign key column');
      }
      columns.push(c);
    }
    const statements = createTableSql(name, columns, input.rlsEnabled ?? false);
    await this.ddl(async (tx) => {
      for (const s of statements) await tx.query(s);
    });
  }

  async drop(name: string): Promise<void> {
    const t = await this.table(name);
    await this.ddl((tx) => tx.query(`drop table ${qualified(t.name)}`));
  }

  /** Applies every change in one transaction; returns one summary line per operation. */
  async alter(name: string, changes: SchemaChanges): Promise<{ tableName: string; operations: string[] }> {
    const plan = planAlter(await this.table(name), changes);
    await this.ddl(async (tx) => {
      for (const step of plan.steps) {
        if (typeof step.sql === 'string') await tx.query(step.sql);
        else await step.sql(tx);
      }
    });
    return { tableName: plan.tableName, operations: plan.steps.map((step) => step.op) };
  }

  /** Admin SQL: one statement with bind parameters, as the owner role, in a transaction. */
  async sql(query: string, params: unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    try {
      const r = await this.db.transaction((tx) => tx.query(query, params)).catch(async (err) => {
        // PGlite prepares every query, so a script of several statements fails with a syntax
        // error (42601); without parameters it runs as a script instead (no rows come back).
        if (params.length || pgErrorInfo(err)?.code !== '42601' || this.db.kind !== 'pglite') throw err;
        await this.db.transaction((tx) => tx.exec(query));
        return { rows: [], rowCount: 0 };
      });
      const rows = r.rows ?? [];
      // PGlite counts only changed rows: a select reports how many it returned.
      return { rows, rowCount: Math.max(r.rowCount ?? 0, rows.length) };
    } catch (err) {
      if (err instanceof AppError) throw err;
      const info = pgErrorInfo(err);
      if (!info) throw err;
      // A full disk is the server's state, not a mistake in the SQL: 507 as everywhere.
      if (info.code === '53100') throw translatePgError(err);
      // The admin wrote this SQL: the database's own message is what they need to fix it.
      const text = err instanceof Error ? err.message : String(err);
      const position = sqlPosition(query, (err as { position?: unknown }).position);
      const where = position ? ` (line ${position.line}, column ${position.column})` : '';
      throw new AppError('SQL_ERROR', { message: `SQLSTATE ${info.code}: ${safe(text, 500)}${where}`, cause: err, ...(position ? { position } : {}) });
    } finally {
      this.schema.invalidate();
    }
  }
}
