// A small table for the records SQL unit tests (build, read cache): one column of each kind.
import type { ColumnMeta, TableMeta } from '../../src/database/schema.js';
import { valueKind } from '../../src/database/types.js';

export function col(name: string, typname: string, castType: string): ColumnMeta {
  return {
    name,
    typname,
    castType,
    kind: valueKind(typname),
    type: typname,
    nullable: true,
    default: null,
    isPrimaryKey: name === 'id',
    unique: name === 'id',
    foreignKey: null,
  };
}
export const columnList = [
  col('id', 'uuid', 'uuid'),
  col('name', 'text', 'text'),
  col('age', 'int4', 'integer'),
  col('ok', 'bool', 'boolean'),
  col('meta', 'jsonb', 'jsonb'),
];
export const table: TableMeta = {
  name: 'people',
  isTable: true,
  rlsEnabled: false,
  columns: new Map(columnList.map((c) => [c.name, c])),
  columnList,
  primaryKey: ['id'],
};
