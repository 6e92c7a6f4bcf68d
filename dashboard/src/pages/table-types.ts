// The shape of a table as GET /api/database/tables/{t}/schema answers it, shared by the table's sub-pages.
export interface Column {
  name: string;
  type: string;
  nullable: boolean;
  unique: boolean;
  default: string | null;
  isPrimaryKey: boolean;
  foreignKey: { table: string; column: string; on_delete: string } | null;
}

export interface Schema {
  tableName: string;
  rlsEnabled: boolean;
  realtime: boolean;
  columns: Column[];
}
