import { createHash } from 'node:crypto';
import { AppError } from '../../errors/index.js';
import type { Db, Queryable } from '../../db/types.js';
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
 * The proof system.record_user_migration() checks (migration 0300): sha256(key || sha256(key ||
 * message)) in hex, the message being version, name, checksum and statements on lines. The key
 * is a secret of system.credentials that the owner role cannot read, so the SQL it runs (admin
 * SQL, the migration itself) cannot record a migration with a checksum of its choosing.
 */
export function migrationProof(
  key: string,
  m: { version: string; name: string; checksum: string; statements: number },
): string {
  const k = Buffer.from(key, 'utf8');
  const inner = createHash('sha256')
    .update(Buffer.concat([k, Buffer.from(`${m.version}\n${m.name}\n${m.checksum}\n${m.statements}`, 'utf8')]))
    .digest();
  return createHash('sha256')
    .update(Buffer.concat([k, inner]))
    .digest('hex');
}

/** Reads the key of the proofs with Plinth's own connection (the owner role may not read it). */
export function migrationsKey(db: Queryable): () => Promise<string> {
  let key: Promise<string> | null = null;
  return () => {
    key ??= db
      .query<{ value: string }>(`select value from system.credentials where name = 'user_migrations_key'`)
      .then((r) => {
        if (!r.rows[0]) throw new Error('system.credentials has no user_migrations_key (migration 0300)');
        return r.rows[0].value;
      });
    key.catch(() => {
      key = null;
    });
    return key;
  };
}

/**
 * The app's versioned migrations: each applied in one transaction as the owner role (the
 * pool it is given), recorded with its checksum in system.user_migrations in that same
 * transaction, through system.record_user_migration() with a proof only this service can make
 * (the owner role reads the table but cannot write it). A version is applied once; the same
 * version with other SQL is drift.
 */
export class MigrationsService {
  constructor(
    private readonly owner: Db,
    private readonly schema: SchemaCache,
    private readonly key: () => Promise<string>,
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
      const { rows } = await this.owner.query<{ checksum: string }>(
        'select checksum from system.user_migrations where version = $1',
        [version],
      );
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
    const record = { version: input.version, name: input.name, checksum, statements: statements.length };
    const proof = migrationProof(await this.key(), record);
    try {
      return await this.owner.transaction(async (tx) => {
        // One migration at a time, across instances.
        await tx.query('select pg_advisory_xact_lock(7132)');
        const { rows } = await tx.query<AppliedMigration>(
          `select version, name, checksum from system.user_migrations where version = $1`,
          [input.version],
        );
        const done = rows[0];
        if (done) throw alreadyApplied(done, checksum);
        await tx.exec(input.sql);
        const r = await tx.query<AppliedMigration>(
          `select version, name, checksum, statements, to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "appliedAt"
             from system.record_user_migration($1, $2, $3, $4, $5)`,
          [record.version, record.name, record.checksum, record.statements, proof],
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
    return new AppError('MIGRATION_APPLIED', {
      message: `Migration ${done.version} (${done.name}) is already applied.`,
    });
  }
  return new AppError('MIGRATION_DRIFT', {
    message: `Migration ${done.version} (${done.name}) was applied with other SQL (checksum ${done.checksum.slice(0, 12)}…, this one ${checksum.slice(0, 12)}…): the file changed after it was applied.`,
  });
}
