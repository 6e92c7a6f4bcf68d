import { AppError } from '../errors/index.js';
import type { Db, Queryable } from '../db/types.js';
import { checkIdent, qualified, quoteLiteral } from '../database/ident.js';

/** The trigger that publishes a table's changes (also how metadata and the advisor tell realtime is on). */
export const REALTIME_TRIGGER = 'plinth_realtime';
const TRIGGER = REALTIME_TRIGGER;

/**
 * Database changes per table: the trigger realtime.notify_change() on a table of schema
 * public, named plinth_realtime, is the one source of truth for "realtime is on".
 */
export class RealtimeTables {
  constructor(private readonly db: Db) {}

  /** Turns change notifications on (idempotent); answers the key column used for table:<t>:<key>. */
  async enable(table: string): Promise<{ primaryKey: string | null }> {
    const name = checkIdent(table, 'table name');
    return this.db.transaction(async (tx) => {
      await this.mustExist(tx, name);
      const { rows } = await tx.query<{ col: string }>(
        `select a.attname as col from pg_index i
           join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
          where i.indrelid = to_regclass($1) and i.indisprimary and i.indnatts = 1`,
        [qualified(name)],
      );
      const pk = rows[0]?.col ?? null;
      await tx.exec(
        `drop trigger if exists ${TRIGGER} on ${qualified(name)};
         create trigger ${TRIGGER} after insert or update or delete on ${qualified(name)}
           for each row execute function realtime.notify_change(${pk ? quoteLiteral(pk) : ''})`,
      );
      return { primaryKey: pk };
    });
  }

  async disable(table: string): Promise<void> {
    const name = checkIdent(table, 'table name');
    await this.db.transaction(async (tx) => {
      await this.mustExist(tx, name);
      await tx.exec(`drop trigger if exists ${TRIGGER} on ${qualified(name)}`);
    });
  }

  async isEnabled(table: string): Promise<boolean> {
    const { rows } = await this.db.query<{ on: boolean }>(
      `select exists (select 1 from pg_trigger where tgrelid = to_regclass($1) and tgname = '${TRIGGER}') as on`,
      [qualified(checkIdent(table, 'table name'))],
    );
    return rows[0]?.on === true;
  }

  private async mustExist(tx: Queryable, name: string): Promise<void> {
    const { rows } = await tx.query<{ kind: string | null }>(
      `select c.relkind::text as kind from pg_class c where c.oid = to_regclass($1)`,
      [qualified(name)],
    );
    if (!rows[0] || !['r', 'p'].includes(rows[0].kind ?? ''))
      throw new AppError('TABLE_NOT_FOUND', { message: `No table "${name}".` });
  }
}
