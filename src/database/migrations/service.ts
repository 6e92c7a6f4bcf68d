import { createHash } from 'node:crypto';
import { AppError } from '../../errors/index.js';
import type { Db } from '../../db/types.js';
import type { SchemaCache } from '../schema.js';
import { adminSqlError } from '../sql-error.js';
import { dryRun, splitStatements, type RiskLevel } from './risk.js';

/** One applied migration as the API lists it. */
export interface AppliedMigration {
  version: string;
  name: string;
  checksum: string;
  statements: number;
  appliedAt: string;
}

export const VERSION_PATTERN = '^[0-9]{1,32}$';
export const NAME_PATTERN = '^[A-Za-z0-9_-]{1,100}$';

/** The checksum a migration is recorded with: sha256 of its text, hex. */
export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

const LIST_SQL = `select version, name, checksum, statements, to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "appliedAt"
  from system.user_migrations order by length(version), version`;

/**
 * The app's versioned migrations: each applied in one transaction as the owner role (the
 * pool it is given), recorded with its checksum in system.user_migrations in that same
 * transaction. A version is applied once; the same version with other SQL is drift.
 */
export class MigrationsService {
  constructor(
    private readonly owner: Db,
    private readonly schema: SchemaCache,
  ) {}

  async list(): Promise<AppliedMigration[]> {
    return (await this.owner.query<AppliedMigration>(LIST_SQL)).rows;
  }

  /** The risk of a script (never run), and where its version stands when one is given. */
  async dryRun(sql: string, version: string | null) {
    const result = await dryRun(this.owner, sql);
    const checksum = checksumOf(sql);
    let status: 'pending' | 'applied' | 'drift' | null = null;
    if (version !== null) {
      const { rows } = await this.owner.query<{ checksum: string }>('select checksum from system.user_migrations where version = $1', [version]);
      status = !rows[0] ? 'pending' : rows[0].checksum === checksum ? 'applied' : 'drift';
    }
    return { ...result, riskLevel: result.riskLevel as RiskLevel, checksum, version, status };
  }

  async apply(input: { version: string; name: string; sql: string }): Promise<AppliedMigration> {
    const statements = await splitStatements(input.sql);
    if (!statements.length) throw new AppError('INVALID_INPUT', { message: 'The migration has no SQL statement.' });
    const control = statements.find((s) => s.kind === 'TransactionStmt');
    if (control) {
      throw new AppError('INVALID_INPUT', {
        message: `The migration controls the transaction itself ("${control.sql.slice(0, 60)}"): each migration already runs in one transaction.`,
        nextActions: 'Remove BEGIN, COMMIT, ROLLBACK and SAVEPOINT statements from the file and send it again.',
      });
    }
    const checksum = checksumOf(input.sql);
    try {
      return await this.owner.transaction(async (tx) => {
        // One migration at a time, across instances.
        await tx.query('select pg_advisory_xact_lock(7132)');
        const { rows } = await tx.query<AppliedMigration>(`select version, name, checksum from system.user_migrations where version = $1`, [input.version]);
        const done = rows[0];
        if (done) throw alreadyApplied(done, checksum);
        await tx.exec(input.sql);
        const r = await tx.query<AppliedMigration>(
          `insert into system.user_migrations (version, name, checksum, statements) values ($1, $2, $3, $4)
           returning version, name, checksum, statements, to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "appliedAt"`,
          [input.version, input.name, checksum, statements.length],
        );
        return r.rows[0]!;
      });
    } catch (err) {
      throw adminSqlError(err, input.sql);
    } finally {
      this.schema.invalidate();
    }
  }
}

function alreadyApplied(done: { version: string; name: string; checksum: string }, checksum: string): AppError {
  if (done.checksum === checksum) {
    return new AppError('MIGRATION_APPLIED', { message: `Migration ${done.version} (${done.name}) is already applied.` });
  }
  return new AppError('MIGRATION_DRIFT', {
    message: `Migration ${done.version} (${done.name}) was applied with other SQL (checksum ${done.checksum.slice(0, 12)}…, this one ${checksum.slice(0, 12)}…): the file changed after it was applied.`,
  });
}
