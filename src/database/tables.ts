import { AppError } from '../errors/index.js';
import type { Db, Queryable } from '../db/types.js';
import { pgErrorInfo } from '../db/errors.js';
import { checkIdent, qualified, quoteIdent, safe } from './ident.js';
import {
  AUTO_COLUMNS,
  columnSql,
  createTableSql,
  defaultSql,
  onDeleteSql,
  pgType,
  referencesSql,
  type ColumnDef,
} from './ddl.js';
import type { ColumnMeta, SchemaCache, TableMeta } from './schema.js';

/** The table schema as the API returns it. */
export interface TableSchema {
  tableName: string;
  rlsEnabled: boolean;
  columns: Array<Pick<ColumnMeta, 'name' | 'type' | 'nullable' | 'unique' | 'default' | 'isPrimaryKey' | 'foreignKey'>>;
}

export interface SchemaChanges {
  addColumns?: Array<{ columnName: string; type: string; isNullable?: boolean; defaultValue?: string | null; unique?: boolean }>;
  dropColumns?: string[];
  updateColumns?: Array<{ columnName: string; newColumnName?: string; type?: string; defaultValue?: string | null; isNullable?: boolean }>;
  addForeignKeys?: Array<{ columnName: string; foreignKey: { referenceTable: string; referenceColumn: string; onDelete?: string } }>;
  dropForeignKeys?: string[];
  renameTable?: { newTableName: string };
}

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
    const t = await this.table(name);
    const table = qualified(t.name);
    const cols = new Set(t.columnList.map((c) => c.name));
    const steps: Array<{ sql: string | ((tx: Queryable) => Promise<string[]>); op: string }> = [];
    const guard = (col: string, what: string) => {
      if (Object.hasOwn(AUTO_COLUMNS, col)) throw new AppError('INVALID_INPUT', { message: `Column "${col}" is managed by Plinth and cannot be ${what}.` });
    };
    const known = (col: string) => {
      checkIdent(col, 'column name');
      if (!cols.has(col)) throw new AppError('UNKNOWN_COLUMN', { message: `Table "${t.name}" has no column "${col}".` });
      return col;
    };

    for (const col of changes.dropForeignKeys ?? []) {
      known(col);
      steps.push({ sql: (tx) => dropForeignKeys(tx, t.name, col), op: `Dropped foreign key on column ${col}` });
    }
    for (const col of changes.dropColumns ?? []) {
      known(col);
      guard(col, 'dropped');
      cols.delete(col);
      steps.push({ sql: `alter table ${table} drop column ${quoteIdent(col)}`, op: `Dropped column ${col}` });
    }
    for (const u of changes.updateColumns ?? []) {
      let col = known(u.columnName);
      if (u.type !== undefined) {
        guard(col, 'changed');
        const pg = pgType(u.type, col);
        steps.push({ sql: `alter table ${table} alter column ${quoteIdent(col)} type ${pg} using ${quoteIdent(col)}::${pg}`, op: `Changed type of column ${col} to ${u.type}` });
      }
      if (u.defaultValue !== undefined) {
        const type = u.type ?? t.columns.get(col)?.type ?? 'string';
        steps.push(
          u.defaultValue === null
            ? { sql: `alter table ${table} alter column ${quoteIdent(col)} drop default`, op: `Dropped default of column ${col}` }
            : { sql: `alter table ${table} alter column ${quoteIdent(col)} set default ${defaultSql(type, col, u.defaultValue)}`, op: `Set default of column ${col}` },
        );
      }
      if (u.isNullable !== undefined) {
        guard(col, 'changed');
        steps.push({
          sql: `alter table ${table} alter column ${quoteIdent(col)} ${u.isNullable ? 'drop' : 'set'} not null`,
          op: `Made column ${col} ${u.isNullable ? 'nullable' : 'not nullable'}`,
        });
      }
      if (u.newColumnName !== undefined && u.newColumnName !== col) {
        guard(col, 'renamed');
        const to = checkIdent(u.newColumnName, 'column name');
        if (cols.has(to)) throw new AppError('ALREADY_EXISTS', { message: `Table "${t.name}" already has a column "${to}".` });
        steps.push({ sql: `alter table ${table} rename column ${quoteIdent(col)} to ${quoteIdent(to)}`, op: `Renamed column ${col} to ${to}` });
        cols.delete(col);
        cols.add(to);
        col = to;
      }
    }
    for (const a of changes.addColumns ?? []) {
      const col = checkIdent(a.columnName, 'column name');
      if (cols.has(col)) throw new AppError('ALREADY_EXISTS', { message: `Table "${t.name}" already has a column "${col}".` });
      cols.add(col);
      const def = columnSql({ name: col, type: a.type, nullable: a.isNullable ?? true, defaultValue: a.defaultValue, unique: a.unique });
      steps.push({ sql: `alter table ${table} add column ${def}`, op: `Added column ${col} (${a.type})` });
    }
    for (const f of changes.addForeignKeys ?? []) {
      const col = known(f.columnName);
      const ref = { table: checkIdent(f.foreignKey.referenceTable, 'reference table'), column: checkIdent(f.foreignKey.referenceColumn, 'reference column'), onDelete: f.foreignKey.onDelete };
      steps.push({
        sql: `alter table ${table} add foreign key (${quoteIdent(col)}) ${referencesSql(ref, col)}`,
        op: `Added foreign key on column ${col} referencing ${ref.table}(${ref.column}) on delete ${onDeleteSql(ref.onDelete, col)}`,
      });
    }
    let tableName = t.name;
    if (changes.renameTable) {
      const to = checkIdent(changes.renameTable.newTableName, 'new table name');
      if (to !== t.name) {
        steps.push({ sql: `alter table ${table} rename to ${quoteIdent(to)}`, op: `Renamed table ${t.name} to ${to}` });
        tableName = to;
      }
    }
    if (!steps.length) throw new AppError('INVALID_INPUT', { message: 'The request has no schema change.' });
    await this.ddl(async (tx) => {
      for (const s of steps) {
        if (typeof s.sql === 'string') await tx.query(s.sql);
        else await s.sql(tx);
      }
    });
    return { tableName, operations: steps.map((s) => s.op) };
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
      // The admin wrote this SQL: the database's own message is what they need to fix it.
      const text = err instanceof Error ? err.message : String(err);
      throw new AppError('SQL_ERROR', { message: `SQLSTATE ${info.code}: ${safe(text, 500)}`, cause: err });
    } finally {
      this.schema.invalidate();
    }
  }
}

/** Drops the single-column foreign keys of `column` (names come quoted from Postgres). */
async function dropForeignKeys(tx: Queryable, table: string, column: string): Promise<string[]> {
  const { rows } = await tx.query<{ name: string }>(
    `select quote_ident(k.conname) as name from pg_constraint k
     join pg_attribute a on a.attrelid = k.conrelid and a.attnum = k.conkey[1]
     where k.conrelid = $1::regclass and k.contype = 'f' and a.attname = $2`,
    [qualified(table), column],
  );
  if (!rows.length) throw new AppError('INVALID_INPUT', { message: `Column "${column}" has no foreign key.` });
  for (const r of rows) await tx.query(`alter table ${qualified(table)} drop constraint ${r.name}`);
  return rows.map((r) => r.name);
}
