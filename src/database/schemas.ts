// The input of each table, SQL and records operation, declared once: the HTTP routes
// (/api/database/tables, /sql, /advance/rawsql, /records/{table}) and the MCP tools (run-raw-sql,
// get-table-schema, select-records, write-records, …) take these, and the tools' argument types
// are inferred from them (test/mcp/schemas.test.ts keeps the two faces equal).
import { type Static, Type } from 'typebox';

/** A table named in a path or a tool's arguments; checked against the real schema by the service. */
export const TableRef = Type.String({ maxLength: 256, description: 'A table name, e.g. "todos"' });
/** A name a table or column is created or renamed with. */
const Name = Type.String({
  minLength: 1,
  maxLength: 63,
  description: 'letters, digits and _, starting with a letter or _',
});
const Default = Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]);
const OnDelete = Type.String({ description: 'CASCADE, SET NULL, SET DEFAULT, RESTRICT or NO ACTION (default)' });
const ForeignKey = Type.Object({ table: Name, column: Name, onDelete: Type.Optional(OnDelete) });
const ColumnDef = Type.Object({
  name: Name,
  type: Type.String({ description: 'string, integer, float, boolean, uuid, datetime, date or json' }),
  nullable: Type.Boolean(),
  unique: Type.Optional(Type.Boolean()),
  defaultValue: Type.Optional(Default),
  foreignKey: Type.Optional(Type.Union([ForeignKey, Type.Null()])),
});
const many = <T extends Parameters<typeof Type.Array>[0]>(t: T) => Type.Optional(Type.Array(t, { maxItems: 500 }));

/** POST /api/database/tables: the columns besides id, created_at and updated_at. */
export const CreateTable = Type.Object({
  tableName: Name,
  rlsEnabled: Type.Optional(Type.Boolean()),
  columns: Type.Array(ColumnDef, { maxItems: 500 }),
});
export type CreateTableInput = Static<typeof CreateTable>;

/** PATCH /api/database/tables/{tableName}/schema: every change, in one transaction. */
export const AlterTable = Type.Object({
  addColumns: many(
    Type.Object({
      columnName: Name,
      type: Type.String(),
      isNullable: Type.Optional(Type.Boolean()),
      defaultValue: Type.Optional(Default),
      unique: Type.Optional(Type.Boolean()),
    }),
  ),
  dropColumns: many(Name),
  updateColumns: many(
    Type.Object({
      columnName: Name,
      newColumnName: Type.Optional(Name),
      type: Type.Optional(Type.String()),
      defaultValue: Type.Optional(Default),
      isNullable: Type.Optional(Type.Boolean()),
    }),
  ),
  addForeignKeys: many(
    Type.Object({
      columnName: Name,
      foreignKey: Type.Object({ referenceTable: Name, referenceColumn: Name, onDelete: Type.Optional(Type.String()) }),
    }),
  ),
  dropForeignKeys: many(Name),
  renameTable: Type.Optional(Type.Object({ newTableName: Name })),
});
export type AlterTableInput = Static<typeof AlterTable>;

/** POST /api/database/sql and /advance/rawsql, MCP run-raw-sql. */
export const RunSql = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 1_000_000 }),
  params: Type.Optional(
    Type.Array(Type.Unknown(), { default: [], maxItems: 10_000, description: 'Values for $1, $2, ...' }),
  ),
});
export type RunSqlInput = Static<typeof RunSql>;

/** One record as JSON: column → value. */
export const Row = Type.Record(Type.String(), Type.Unknown());
/** The records one insert takes (POST /api/database/records/{table}). */
export const InsertRows = Type.Array(Row, { minItems: 1, maxItems: 1000 });
