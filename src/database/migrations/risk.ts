// The risk of a migration, read with PostgreSQL's own parser (libpg-query, WASM): which
// statements drop or empty data, rewrite or lock a big table, or change every row. The parser
// is imported on the first script it reads: a start does not load it (issue #38).
import { AppError } from '../../errors/index.js';
import type { Queryable } from '../../db/types.js';

export type RiskLevel = 'SAFE' | 'WARNING' | 'DANGER';
const RANK: Record<RiskLevel, number> = { SAFE: 0, WARNING: 1, DANGER: 2 };
export const maxRisk = (levels: RiskLevel[]): RiskLevel =>
  levels.reduce<RiskLevel>((a, b) => (RANK[b] > RANK[a] ? b : a), 'SAFE');

/** A table this big is rewritten or locked for long enough that clients notice. */
export const BIG_TABLE_ROWS = 100_000;
export const BIG_TABLE_BYTES = 256 * 1024 * 1024;

/** One statement of a script: its text, its parse-tree node kind and the node. */
export interface ParsedStatement {
  sql: string;
  kind: string;
  node: Node;
}
type Node = Record<string, any>;

type Parse = (sql: string) => unknown;
let loaded: Promise<Parse> | null = null;
const parser = (): Promise<Parse> => {
  loaded ??= import('libpg-query')
    .then(async ({ loadModule, parseSync }) => {
      await loadModule();
      return parseSync;
    })
    .catch((err) => {
      loaded = null;
      throw err;
    });
  return loaded;
};

/** Splits a script into statements with the real parser; a syntax error is 400 SQL_ERROR with its line and column. */
export async function splitStatements(sql: string): Promise<ParsedStatement[]> {
  const parseSync = await parser();
  let tree: { stmts?: Array<{ stmt: Node; stmt_location?: number; stmt_len?: number }> };
  try {
    tree = parseSync(sql) as typeof tree;
  } catch (err) {
    const e = err as { message?: string; sqlDetails?: { cursorPosition?: number } };
    const at = e.sqlDetails?.cursorPosition;
    const position = typeof at === 'number' ? positionOf(sql, at) : null;
    const where = position ? ` (line ${position.line}, column ${position.column})` : '';
    throw new AppError('SQL_ERROR', {
      message: `The SQL does not parse: ${e.message ?? 'syntax error'}${where}`,
      ...(position ? { position } : {}),
    });
  }
  // Locations are byte offsets into the UTF-8 text.
  const bytes = Buffer.from(sql, 'utf8');
  return (tree.stmts ?? []).map((s) => {
    const start = s.stmt_location ?? 0;
    const text = bytes
      .subarray(start, s.stmt_len ? start + s.stmt_len : bytes.length)
      .toString('utf8')
      .trim();
    const kind = Object.keys(s.stmt)[0]!;
    return { sql: text, kind, node: s.stmt[kind] as Node };
  });
}

function positionOf(sql: string, byteOffset: number): { line: number; column: number } {
  const before = Buffer.from(sql, 'utf8').subarray(0, byteOffset).toString('utf8');
  const lines = before.split('\n');
  return { line: lines.length, column: Array.from(lines[lines.length - 1]!).length + 1 };
}

/** Rows (estimate) and bytes of the tables a script touches; absent when the table does not exist yet. */
export type TableSizes = Map<string, { rows: number; bytes: number }>;

const relName = (r: Node | undefined): string | null =>
  r?.relname ? (r.schemaname ? `${r.schemaname}.${r.relname}` : r.relname) : null;

/** The tables whose size matters to the risk of these statements. */
export function touchedTables(statements: ParsedStatement[]): string[] {
  const names = new Set<string>();
  for (const s of statements) {
    const name = relName(s.node.relation);
    if (name) names.add(name);
  }
  return [...names];
}

/** Reads the sizes of the named tables (schema public unless qualified). */
export async function tableSizes(db: Queryable, names: string[]): Promise<TableSizes> {
  if (!names.length) return new Map();
  const { rows } = await db.query<{ name: string; rows: number; bytes: number }>(
    `select t.name, greatest(c.reltuples, 0)::bigint as rows, pg_total_relation_size(c.oid) as bytes
       from unnest($1::text[], $2::text[], $3::text[]) as t(name, s, n)
       join pg_class c on c.oid = to_regclass(format('%I.%I', t.s, t.n))`,
    [names, names.map((n) => (n.includes('.') ? n.split('.')[0] : 'public')), names.map((n) => n.split('.').pop())],
  );
  return new Map(rows.map((r) => [r.name, { rows: Number(r.rows), bytes: Number(r.bytes) }]));
}

export interface Assessment {
  riskLevel: RiskLevel;
  reasons: string[];
}

class Findings {
  readonly reasons: string[] = [];
  level: RiskLevel = 'SAFE';
  add(level: RiskLevel, reason: string): void {
    this.level = maxRisk([this.level, level]);
    this.reasons.push(reason);
  }
}

/** A table over the size limits, described ("~120000 rows, 30 MB"), else null. */
function big(sizes: TableSizes, table: string | null): string | null {
  const s = table ? sizes.get(table) : undefined;
  if (!s || (s.rows < BIG_TABLE_ROWS && s.bytes < BIG_TABLE_BYTES)) return null;
  return `~${s.rows} rows, ${Math.round(s.bytes / 1024 / 1024)} MB`;
}

const DATA_DROPS = new Set([
  'OBJECT_TABLE',
  'OBJECT_SCHEMA',
  'OBJECT_MATVIEW',
  'OBJECT_FOREIGN_TABLE',
  'OBJECT_SEQUENCE',
]);
const objectLabel = (t: string) =>
  t
    .replace(/^OBJECT_/, '')
    .toLowerCase()
    .replace('_', ' ');
const dropNames = (objects: Node[] | undefined): string =>
  (objects ?? []).map((o) => (o.List?.items ?? [o]).map((i: Node) => i.String?.sval ?? '?').join('.')).join(', ');

/** The risk of one statement, given the sizes of the tables it touches. */
export function assess(s: ParsedStatement, sizes: TableSizes): Assessment {
  const f = new Findings();
  const n = s.node;
  const table = relName(n.relation);
  switch (s.kind) {
    case 'DropStmt': {
      const what = `${objectLabel(n.removeType)} ${dropNames(n.objects)}`;
      if (DATA_DROPS.has(n.removeType)) f.add('DANGER', `drops ${what}: its data is gone for good`);
      else f.add('WARNING', `drops ${what}: clients or policies that use it break`);
      if (n.behavior === 'DROP_CASCADE') f.add('DANGER', 'CASCADE also drops everything that depends on it');
      break;
    }
    case 'DropdbStmt':
    case 'DropRoleStmt':
      f.add('DANGER', `${s.kind === 'DropdbStmt' ? 'drops a database' : 'drops a role'}`);
      break;
    case 'TruncateStmt':
      f.add(
        'DANGER',
        `truncates ${(n.relations ?? []).map((r: Node) => relName(r.RangeVar)).join(', ')}: every row is deleted`,
      );
      break;
    case 'DeleteStmt':
      if (!n.whereClause) f.add('DANGER', `DELETE without WHERE: deletes every row of ${table}`);
      break;
    case 'UpdateStmt':
      if (!n.whereClause) f.add('DANGER', `UPDATE without WHERE: changes every row of ${table}`);
      break;
    case 'AlterTableStmt':
      for (const c of n.cmds ?? []) alterCommand(f, table, c.AlterTableCmd ?? {}, big(sizes, table));
      break;
    case 'RenameStmt':
      f.add(
        'WARNING',
        `renames ${objectLabel(n.renameType)} ${table ?? dropNames([n.object])} to ${n.newname}: clients that use the old name break`,
      );
      break;
    case 'IndexStmt':
      if (n.concurrent)
        f.add(
          'DANGER',
          "CREATE INDEX CONCURRENTLY cannot run inside the migration's transaction: it fails; run it through POST /api/database/sql instead",
        );
      else if (big(sizes, table))
        f.add('WARNING', `builds an index on ${table} (${big(sizes, table)}): writes to it wait until the build ends`);
      break;
    case 'TransactionStmt':
      f.add('DANGER', 'BEGIN/COMMIT/ROLLBACK: each migration already runs in one transaction; remove it');
      break;
    case 'VacuumStmt':
    case 'ClusterStmt':
      f.add(
        'DANGER',
        `${s.kind === 'VacuumStmt' ? 'VACUUM' : 'CLUSTER'} cannot run inside a transaction (or rewrites the table under an exclusive lock)`,
      );
      break;
  }
  return { riskLevel: f.level, reasons: f.reasons };
}

const VOLATILE = new Set(['random', 'gen_random_uuid', 'uuid_generate_v4', 'clock_timestamp', 'timeofday', 'nextval']);

/** One ALTER TABLE action. */
function alterCommand(f: Findings, table: string | null, c: Node, size: string | null): void {
  const lock = size ? `${table} is big (${size}): ` : '';
  const slow: RiskLevel = size ? 'DANGER' : 'WARNING';
  switch (c.subtype) {
    case 'AT_DropColumn':
      f.add('DANGER', `drops column ${table}.${c.name}: its data is gone for good`);
      break;
    case 'AT_AlterColumnType':
      f.add(
        slow,
        `${lock}changes the type of ${table}.${c.name}: the table is rewritten under an ACCESS EXCLUSIVE lock (reads and writes wait)`,
      );
      break;
    case 'AT_SetNotNull':
      f.add('WARNING', `${lock}SET NOT NULL on ${table}.${c.name} scans the whole table under an exclusive lock`);
      break;
    case 'AT_AddColumn': {
      const cons: Node[] = (c.def?.ColumnDef?.constraints ?? []).map((x: Node) => x.Constraint);
      const def = cons.find((x) => x.contype === 'CONSTR_DEFAULT');
      const fn = def?.raw_expr?.FuncCall?.funcname?.map((p: Node) => p.String?.sval).pop();
      if (fn && VOLATILE.has(fn))
        f.add(
          slow,
          `${lock}adds ${table}.${c.def.ColumnDef.colname} with a volatile default (${fn}()): the table is rewritten under an exclusive lock`,
        );
      if (cons.some((x) => x.contype === 'CONSTR_NOTNULL') && !def)
        f.add(
          'WARNING',
          `adds NOT NULL column ${c.def.ColumnDef.colname} without a default: fails if ${table} has rows`,
        );
      break;
    }
    case 'AT_AddConstraint': {
      const k = c.def?.Constraint ?? {};
      if ((k.contype === 'CONSTR_FOREIGN' || k.contype === 'CONSTR_CHECK') && !k.skip_validation) {
        f.add(
          'WARNING',
          `${lock}adds a ${k.contype === 'CONSTR_FOREIGN' ? 'foreign key' : 'check'} to ${table} and checks every row; add it NOT VALID and VALIDATE it later to avoid the long lock`,
        );
      } else if (k.contype === 'CONSTR_PRIMARY' || k.contype === 'CONSTR_UNIQUE') {
        f.add(slow, `${lock}builds a unique index on ${table}: writes wait until it ends`);
      }
      break;
    }
    case 'AT_DropConstraint':
      f.add('WARNING', `drops constraint ${c.name} of ${table}`);
      break;
  }
}

/** The dry run of a script: its statements with their risk, and the risk of the whole. */
export async function dryRun(
  db: Queryable,
  sql: string,
): Promise<{ riskLevel: RiskLevel; reasons: string[]; statements: Array<{ sql: string; kind: string } & Assessment> }> {
  const statements = await splitStatements(sql);
  const sizes = await tableSizes(db, touchedTables(statements));
  const assessed = statements.map((s) => ({ sql: s.sql, kind: s.kind, ...assess(s, sizes) }));
  return {
    riskLevel: maxRisk(assessed.map((s) => s.riskLevel)),
    reasons: assessed.flatMap((s, i) => s.reasons.map((r) => `statement ${i + 1}: ${r}`)),
    statements: assessed,
  };
}
