import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { readTables, type TableMetadata } from './tables.js';

/**
 * One part of GET /api/metadata: `name` is its key in the answer, `read` what goes there.
 * Each area contributes one (src/metadata/sections.ts); another is added by appending it to
 * the list the composition root hands in (e.g. schedules).
 */
export interface MetadataSection {
  name: string;
  read(): Promise<unknown>;
}

/** The whole backend in one call, built from its sections, and one table in detail. */
export class MetadataService {
  constructor(
    private readonly deps: { db: Queryable; version: string; realtimeTrigger: string },
    private readonly sections: MetadataSection[],
  ) {}

  async all(): Promise<{ version: string } & Record<string, unknown>> {
    const parts = await Promise.all(this.sections.map(async (s) => [s.name, await s.read()] as const));
    return { version: this.deps.version, ...Object.fromEntries(parts) };
  }

  async table(name: string): Promise<TableMetadata> {
    const found = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(name)
      ? await readTables(this.deps.db, this.deps.realtimeTrigger, name)
      : [];
    if (!found[0])
      throw new AppError('TABLE_NOT_FOUND', { message: `No table "${name.slice(0, 63)}" in schema public.` });
    return found[0];
  }
}
