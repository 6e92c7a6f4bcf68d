import { AppError } from '../errors/index.js';
import { qualified, quoteIdent, quoteLiteral, safe } from './ident.js';
import {
  COLUMN_TYPES,
  COLUMN_TYPE_NAMES,
  ON_DELETE,
  toParam,
  valueKind,
  type ColumnType,
  type OnDelete,
} from './types.js';

/** Columns every table gets; clients cannot define, drop or rename them. */
export const AUTO_COLUMNS: Record<string, ColumnType> = { id: 'uuid', created_at: 'datetime', updated_at: 'datetime' };

const TYPNAME: Record<ColumnType, string> = {
  string: 'text',
  integer: 'int4',
  float: 'float8',
  boolean: 'bool',
  uuid: 'uuid',
  datetime: 'timestamptz',
  date: 'date',
  json: 'jsonb',
};

/** The Postgres type of an API column type (400 listing the types otherwise). */
export function pgType(type: string, column: string): string {
  if (!Object.hasOwn(COLUMN_TYPES, type)) {
    throw new AppError('INVALID_INPUT', {
      message: `Column "${column}" has unknown type "${safe(type)}"; use one of ${COLUMN_TYPE_NAMES.join(', ')}.`,
    });
  }
  return COLUMN_TYPES[type as ColumnType];
}

/**
 * A column default as SQL: a literal checked against the column type, or `now()`,
 * `gen_random_uuid()` or `auth.uid()` where they fit; never raw SQL.
 */
export function defaultSql(type: string, column: string, value: string): string {
  const pg = pgType(type, column);
  const v = value.trim();
  if (/^now\(\)$/i.test(v) && (type === 'datetime' || type === 'date'))
    return type === 'date' ? 'current_date' : 'now()';
  if (/^gen_random_uuid\(\)$/i.test(v) && type === 'uuid') return 'gen_random_uuid()';
  // The caller's user id, so an owner column fills itself in (policies compare it with auth.uid()).
  if (/^auth\.uid\(\)$/i.test(v) && type === 'uuid') return 'auth.uid()';
  const kind = valueKind(TYPNAME[type as ColumnType]);
  const text = toParam({ name: column, kind, castType: pg }, type === 'string' ? value : v, 'query');
  // DDL takes no bind parameters: the checked value is interpolated as a quoted literal.
  return `${quoteLiteral(text ?? '')}::${pg}`;
}

export interface ForeignKeyDef {
  table: string;
  column: string;
  onDelete?: string;
}

/** Normalises an onDelete action (case-insensitive; default NO ACTION). */
export function onDeleteSql(action: string | undefined, column: string): OnDelete {
  if (action === undefined) return 'NO ACTION';
  const a = action.trim().toUpperCase().replace(/_/g, ' ');
  if (!(ON_DELETE as readonly string[]).includes(a)) {
    throw new AppError('INVALID_INPUT', {
      message: `onDelete "${safe(action)}" of column "${column}" is not valid; use one of ${ON_DELETE.join(', ')}.`,
    });
  }
  return a as OnDelete;
}

export function referencesSql(fk: ForeignKeyDef, column: string): string {
  return `references ${qualified(fk.table)} (${quoteIdent(fk.column)}) on delete ${onDeleteSql(fk.onDelete, column)}`;
}

export interface ColumnDef {
  name: string;
  type: string;
  nullable: boolean;
  unique?: boolean;
  defaultValue?: string | null;
  foreignKey?: ForeignKeyDef | null;
}

/** One column definition of create table / add column. */
export function columnSql(c: ColumnDef): string {
  const parts = [quoteIdent(c.name), pgType(c.type, c.name)];
  if (!c.nullable) parts.push('not null');
  if (c.defaultValue !== undefined && c.defaultValue !== null)
    parts.push(`default ${defaultSql(c.type, c.name, c.defaultValue)}`);
  if (c.unique) parts.push('unique');
  if (c.foreignKey) parts.push(referencesSql(c.foreignKey, c.name));
  return parts.join(' ');
}

/** The statements that create a table with the automatic columns, trigger and grants. */
export function createTableSql(table: string, columns: ColumnDef[], rlsEnabled: boolean): string[] {
  const t = qualified(table);
  const defs = [
    'id uuid primary key default gen_random_uuid()',
    ...columns.map(columnSql),
    'created_at timestamptz not null default now()',
    'updated_at timestamptz not null default now()',
  ];
  return [
    `create table ${t} (${defs.join(', ')})`,
    `create trigger plinth_updated_at before update on ${t} for each row execute function system.set_updated_at()`,
    // RLS (when on) restricts rows; these grants only let the request roles reach the table.
    `grant select, insert, update, delete on ${t} to anon, authenticated`,
    ...(rlsEnabled ? [`alter table ${t} enable row level security`] : []),
  ];
}
