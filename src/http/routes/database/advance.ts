import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { AppError } from '../../../errors/index.js';
import { bulkUpsert } from '../../../database/bulk.js';
import { RunSql } from '../../../database/schemas.js';
import { receiveFile } from '../storage/multipart.js';

const admin = { access: 'admin' as const };
const MAX_BULK_BYTES = 20 * 1024 * 1024;
const Field = Type.Object({ name: Type.String(), dataTypeID: Type.Integer() });

/** Reads the whole `file` part (bounded) and every text field, wherever they are in the form. */
async function readForm(
  raw: import('node:http').IncomingMessage,
): Promise<{ data: Buffer; filename: string; fields: Readonly<Record<string, string>> }> {
  return receiveFile(raw, async (file, info, fields) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of file) {
      size += (chunk as Buffer).length;
      if (size > MAX_BULK_BYTES)
        throw new AppError('INVALID_BULK_FILE', {
          message: `The file is over ${MAX_BULK_BYTES / 1024 / 1024} MiB; split it into several files.`,
        });
      chunks.push(chunk as Buffer);
    }
    // `fields` is filled as the form is read: the fields sent after the file are there once it resolves.
    return { data: Buffer.concat(chunks), filename: info.filename || 'data.csv', fields };
  });
}

/**
 * InsForge's "advance" database paths (its MCP server's run-raw-sql and bulk-upsert): the same
 * services as POST /api/database/sql and POST /api/database/records/{table}.
 */
export const advanceRoutes: RoutePlugin<'records' | 'tables'> = async (app, { deps }) => {
  app.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null, undefined));

  app.post(
    '/api/database/advance/rawsql',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary:
          'Run SQL as the owner role in one transaction (one statement with params, or a script without); answers the rows of the last, their count and the columns (name, type OID)',
        body: RunSql,
        response: {
          200: Type.Object({ rows: Type.Array(Type.Unknown()), rowCount: Type.Integer(), fields: Type.Array(Field) }),
        },
      },
    },
    async (request) => deps.tables.sql(request.body.query, request.body.params ?? []),
  );

  app.post(
    '/api/database/advance/bulk-upsert',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary:
          'Insert (or, with upsertKey, update by that key) the records of a .csv or .json file: multipart fields file, table, upsertKey',
        consumes: ['multipart/form-data'],
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            rowsAffected: Type.Integer(),
            totalRecords: Type.Integer(),
            table: Type.String(),
            message: Type.String(),
            filename: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      if (!request.headers['content-type']?.startsWith('multipart/form-data')) {
        throw new AppError('INVALID_BULK_FILE', {
          message: 'Send multipart/form-data with the fields file, table and (optional) upsertKey.',
        });
      }
      const form = await readForm(request.raw);
      const table = form.fields.table;
      if (!table) throw new AppError('INVALID_BULK_FILE', { message: 'The form has no "table" field.' });
      return bulkUpsert(deps.records, {
        table,
        data: form.data,
        filename: form.filename,
        upsertKey: form.fields.upsertKey || undefined,
      });
    },
  );
};
