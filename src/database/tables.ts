import { AppError } from '../errors/index.js';
import type { Db, Queryable } from '../db/types.js';
import { refinePgError } from '../db/errors.js';
import { checkIdent, qualified, safe } from './ident.js';
import { AUTO_COLUMNS, createTableSql, type ColumnDef } from './ddl.js';
import type { ColumnMeta, SchemaCache, TableMeta } from './schema.js';
import { planAlter, type SchemaChanges } from './alter.js';
import { explainRefusal, listPolicies, type Policy } from './policies.js';
import { runAdminSql, type AdminSqlResult } from './admin-sql.js';

/** The table schema as the API returns it. */
export interface TableSchema {
  tableName: string;
  rlsEnabled: boolean;
  columns: Array<Pick<ColumnMeta, 'name' | 'type' | 'nullable' | 'unique' | 'default' | 'isPrimaryKey' | 'foreignKey'>>;
}

export type { SchemaChanges } from './alter.js';

const MAX_COLUMNS = 500;

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
    if (!t?.isTable) throw new AppError('TABLE_NOT_FOUND', { message: `No table "${safe(name)}".` });
    return t;
  }

  /** Why `role` was refused `command` on a table (42501 without RLS): the missing grant, or null. */
  async refusal(
    name: string,
    command: 'insert' | 'update' | 'delete',
    role: 'anon' | 'authenticated',
  ): Promise<string | null> {
    return explainRefusal(this.db, name, command, role);
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
      throw refinePgError(err, 'ddl');
    } finally {
      this.schema.invalidate();
    }
  }

  async create(input: { tableName: string; rlsEnabled?: boolean; columns: ColumnDef[] }): Promise<void> {
    const name = checkIdent(input.tableName, 'table name');
    if (input.columns.length > MAX_COLUMNS)
      throw new AppError('INVALID_INPUT', { message: `At most ${MAX_COLUMNS} columns.` });
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

  /** Admin SQL as the owner role, in a transaction (src/database/admin-sql.ts). */
  async sql(query: string, params: unknown[]): Promise<AdminSqlResult> {
    try {
      return await runAdminSql(this.db, query, params);
    } finally {
      this.schema.invalidate();
    }
  }
}
