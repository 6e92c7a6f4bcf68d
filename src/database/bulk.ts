import { parse } from 'csv-parse/sync';
import { AppError } from '../errors/index.js';
import type { Identity } from '../auth/identity.js';
import type { RecordsService } from './records.js';

/** At most this many rows per file: bigger imports go in several files. */
export const BULK_MAX_ROWS = 50_000;

export interface BulkUpsertResult {
  success: boolean;
  rowsAffected: number;
  totalRecords: number;
  table: string;
  message: string;
  filename: string;
}

const bad = (message: string) => new AppError('INVALID_BULK_FILE', { message });

/** The rows of a .csv (header line first; an empty cell is null) or .json (an array of objects) file. */
export function parseBulkFile(data: Buffer, filename: string): Array<Record<string, unknown>> {
  const ext = filename.toLowerCase().split('.').pop();
  let rows: unknown;
  if (ext === 'csv') {
    try {
      rows = parse(data, {
        columns: true,
        skip_empty_lines: true,
        bom: true,
        trim: false,
        cast: (v, ctx) => (v === '' && !ctx.quoting ? null : v),
      });
    } catch (err) {
      throw bad(`The CSV file could not be read: ${err instanceof Error ? err.message.slice(0, 300) : 'bad CSV'}.`);
    }
  } else if (ext === 'json') {
    try {
      rows = JSON.parse(data.toString('utf8'));
    } catch {
      throw bad('The JSON file is not valid JSON.');
    }
  } else {
    throw bad(`"${filename}" is neither .csv nor .json.`);
  }
  if (!Array.isArray(rows) || rows.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    throw bad('The file must hold a list of records: a JSON array of objects, or a CSV file with a header line.');
  }
  if (rows.length > BULK_MAX_ROWS)
    throw bad(`The file has ${rows.length} records; at most ${BULK_MAX_ROWS} go in one file.`);
  return rows as Array<Record<string, unknown>>;
}

/**
 * Inserts the file's records into `table` in one statement, as the admin (the same insert as
 * POST /api/database/records/{table}); with `upsertKey`, a row whose key exists is updated.
 */
export async function bulkUpsert(
  records: RecordsService,
  input: { table: string; data: Buffer; filename: string; upsertKey?: string },
): Promise<BulkUpsertResult> {
  const rows = parseBulkFile(input.data, input.filename);
  const base = { success: true, table: input.table, totalRecords: rows.length, filename: input.filename };
  if (rows.length === 0)
    return { ...base, rowsAffected: 0, message: 'The file holds no records: nothing was written.' };
  const admin: Identity = { kind: 'admin' };
  const query = input.upsertKey ? `on_conflict=${encodeURIComponent(input.upsertKey)}` : '';
  const r = await records.insert(admin, input.table, rows, query, {
    representation: false,
    resolution: input.upsertKey ? 'merge' : null,
    missingDefault: true,
  });
  return {
    ...base,
    rowsAffected: r.count,
    message: `${r.count} of ${rows.length} records written into "${input.table}".`,
  };
}
