import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { checkIdent, qualified, quoteIdent } from './ident.js';
import { AUTO_COLUMNS, columnSql, defaultSql, onDeleteSql, pgType, referencesSql } from './ddl.js';
import type { TableMeta } from './schema.js';
import type { AlterTableInput } from './schemas.js';

/** The changes of one alter: the body of PATCH /api/database/tables/{tableName}/schema. */
export type SchemaChanges = AlterTableInput;

/** One DDL statement (or a step that looks up what to drop first) and its summary line. */
export interface AlterStep {
  sql: string | ((tx: Queryable) => Promise<string[]>);
  op: string;
}

/**
 * Checks every operation against the table as it will be at that point and turns it into
 * DDL, in the order that lets them combine (foreign keys and columns dropped first, the table
 * renamed last). Nothing runs here: a bad operation anywhere refuses the whole request.
 */
export function planAlter(t: TableMeta, changes: SchemaChanges): { steps: AlterStep[]; tableName: string } {
  const plan = new AlterPlan(t);
  for (const col of changes.dropForeignKeys ?? []) plan.dropForeignKey(col);
  for (const col of changes.dropColumns ?? []) plan.dropColumn(col);
  for (const u of changes.updateColumns ?? []) plan.updateColumn(u);
  for (const a of changes.addColumns ?? []) plan.addColumn(a);
  for (const f of changes.addForeignKeys ?? []) plan.addForeignKey(f);
  if (changes.renameTable) plan.renameTable(changes.renameTable.newTableName);
  if (!plan.steps.length) throw new AppError('INVALID_INPUT', { message: 'The request has no schema change.' });
  return { steps: plan.steps, tableName: plan.tableName };
}

type Update = NonNullable<SchemaChanges['updateColumns']>[number];
type Addition = NonNullable<SchemaChanges['addColumns']>[number];
type ForeignKey = NonNullable<SchemaChanges['addForeignKeys']>[number];

class AlterPlan {
  readonly steps: AlterStep[] = [];
  tableName: string;
  private readonly table: string;
  /** The columns as they will be after the steps so far. */
  private readonly cols: Set<string>;

  constructor(private readonly t: TableMeta) {
    this.tableName = t.name;
    this.table = qualified(t.name);
    this.cols = new Set(t.columnList.map((c) => c.name));
  }

  dropForeignKey(col: string): void {
    this.known(col);
    this.steps.push({ sql: (tx) => dropForeignKeys(tx, this.t.name, col), op: `Dropped foreign key on column ${col}` });
  }

  dropColumn(col: string): void {
    this.known(col);
    this.guard(col, 'dropped');
    this.cols.delete(col);
    this.steps.push({ sql: `alter table ${this.table} drop column ${quoteIdent(col)}`, op: `Dropped column ${col}` });
  }

  updateColumn(u: Update): void {
    const col = this.known(u.columnName);
    const column = `alter table ${this.table} alter column ${quoteIdent(col)}`;
    if (u.type !== undefined) {
      this.guard(col, 'changed');
      const pg = pgType(u.type, col);
      this.steps.push({
        sql: `${column} type ${pg} using ${quoteIdent(col)}::${pg}`,
        op: `Changed type of column ${col} to ${u.type}`,
      });
    }
    if (u.defaultValue !== undefined) {
      const type = u.type ?? this.t.columns.get(col)?.type ?? 'string';
      this.steps.push(
        u.defaultValue === null
          ? { sql: `${column} drop default`, op: `Dropped default of column ${col}` }
          : {
              sql: `${column} set default ${defaultSql(type, col, u.defaultValue)}`,
              op: `Set default of column ${col}`,
            },
      );
    }
    if (u.isNullable !== undefined) {
      this.guard(col, 'changed');
      this.steps.push({
        sql: `${column} ${u.isNullable ? 'drop' : 'set'} not null`,
        op: `Made column ${col} ${u.isNullable ? 'nullable' : 'not nullable'}`,
      });
    }
    if (u.newColumnName !== undefined && u.newColumnName !== col) this.renameColumn(col, u.newColumnName);
  }

  addColumn(a: Addition): void {
    const col = this.fresh(a.columnName);
    this.cols.add(col);
    const def = columnSql({
      name: col,
      type: a.type,
      nullable: a.isNullable ?? true,
      defaultValue: a.defaultValue,
      unique: a.unique,
    });
    this.steps.push({ sql: `alter table ${this.table} add column ${def}`, op: `Added column ${col} (${a.type})` });
  }

  addForeignKey(f: ForeignKey): void {
    const col = this.known(f.columnName);
    const ref = {
      table: checkIdent(f.foreignKey.referenceTable, 'reference table'),
      column: checkIdent(f.foreignKey.referenceColumn, 'reference column'),
      onDelete: f.foreignKey.onDelete,
    };
    this.steps.push({
      sql: `alter table ${this.table} add foreign key (${quoteIdent(col)}) ${referencesSql(ref, col)}`,
      op: `Added foreign key on column ${col} referencing ${ref.table}(${ref.column}) on delete ${onDeleteSql(ref.onDelete, col)}`,
    });
  }

  renameTable(newName: string): void {
    const to = checkIdent(newName, 'new table name');
    if (to === this.t.name) return;
    this.steps.push({
      sql: `alter table ${this.table} rename to ${quoteIdent(to)}`,
      op: `Renamed table ${this.t.name} to ${to}`,
    });
    this.tableName = to;
  }

  private renameColumn(col: string, newName: string): void {
    this.guard(col, 'renamed');
    const to = this.fresh(newName);
    this.steps.push({
      sql: `alter table ${this.table} rename column ${quoteIdent(col)} to ${quoteIdent(to)}`,
      op: `Renamed column ${col} to ${to}`,
    });
    this.cols.delete(col);
    this.cols.add(to);
  }

  /** Columns Plinth manages (id, created_at, updated_at) are never dropped, changed or renamed. */
  private guard(col: string, what: string): void {
    if (Object.hasOwn(AUTO_COLUMNS, col))
      throw new AppError('INVALID_INPUT', { message: `Column "${col}" is managed by Plinth and cannot be ${what}.` });
  }

  /** A column the table has at this point. */
  private known(col: string): string {
    checkIdent(col, 'column name');
    if (!this.cols.has(col))
      throw new AppError('UNKNOWN_COLUMN', { message: `Table "${this.t.name}" has no column "${col}".` });
    return col;
  }

  /** A valid name no column has at this point. */
  private fresh(name: string): string {
    const col = checkIdent(name, 'column name');
    if (this.cols.has(col))
      throw new AppError('ALREADY_EXISTS', { message: `Table "${this.t.name}" already has a column "${col}".` });
    return col;
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
