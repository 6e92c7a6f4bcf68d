import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Type } from '@fastify/type-provider-typebox';
import { AppError } from '../../../errors/index.js';
import { BACKUP_NAME_PATTERN } from '../../../admin/backups.js';
import type { RoutePlugin } from '../../types.js';

const tags = ['admin'];
const security = [{ apiKey: [] }];
const Kept = Type.Object({
  name: Type.String(),
  size: Type.Integer({ description: 'Bytes (so far, while running)' }),
  createdAt: Type.String({ format: 'date-time' }),
  status: Type.Union([Type.Literal('running'), Type.Literal('ready'), Type.Literal('failed')]),
  error: Type.Optional(Type.String({ description: 'Why it failed' })),
});
const Name = Type.Object({ name: Type.String({ pattern: BACKUP_NAME_PATTERN, maxLength: 64, description: 'A name from the list, e.g. plinth-backup-2026-11-28T05-30-00-123Z.tar.gz' }) });

/** Operator endpoints: a backup of the running server, streamed or kept on the server. */
export const adminRoutes: RoutePlugin = async (app, { deps }) => {
  const backups = deps.backups;
  app.post(
    '/api/admin/backup',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'A backup of the running server (embedded database + local storage) as a .tar.gz; restore it with "npm run plinth -- restore <file>"',
        security,
      },
    },
    async (_request, reply) => {
      const chunks = backups.archive();
      const gzip = createGzip();
      // The first chunk before the headers: a backup that cannot start (no connection, a
      // backup already running in that session) answers an error envelope, not a 200.
      const first = await chunks.next().catch((err: unknown) => {
        throw new AppError('SERVICE_UNAVAILABLE', { message: `The backup could not start: ${err instanceof Error ? err.message : String(err)}`, cause: err });
      });
      const source = Readable.from(
        (async function* () {
          if (!first.done) yield first.value;
          yield* chunks;
        })(),
      );
      // A failure midway (or the client leaving) ends the stream early: the archive is then
      // incomplete and restore refuses it, so a partial download is never taken for a backup.
      pipeline(source, gzip, () => {});
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      reply.header('content-type', 'application/gzip');
      reply.header('content-disposition', `attachment; filename="plinth-backup-${stamp}.tar.gz"`);
      reply.header('x-plinth-backup-storage', backups.storage === 's3' ? 's3 (not included)' : 'local');
      return reply.send(gzip);
    },
  );

  app.get(
    '/api/admin/backups',
    { config: { access: 'admin' }, schema: { tags, security, summary: 'The backups kept on the server (BACKUP_DIR), newest first', response: { 200: Type.Array(Kept) } } },
    () => backups.list(),
  );
  app.post(
    '/api/admin/backups',
    {
      config: { access: 'admin' },
      schema: { tags, security, summary: 'Starts a backup kept on the server (one at a time); GET /api/admin/backups shows it running, then ready', response: { 202: Kept } },
    },
    async (_request, reply) => reply.status(202).send(backups.start()),
  );
  app.get(
    '/api/admin/backups/:name',
    { config: { access: 'admin' }, schema: { tags, security, summary: 'Downloads a ready backup (.tar.gz)', params: Name } },
    async (request, reply) => {
      const file = await backups.open(request.params.name);
      reply.header('content-type', 'application/gzip');
      reply.header('content-length', file.size);
      reply.header('content-disposition', `attachment; filename="${file.name}"`);
      return reply.send(file.stream);
    },
  );
  app.delete(
    '/api/admin/backups/:name',
    { config: { access: 'admin' }, schema: { tags, security, summary: 'Deletes a ready or failed backup', params: Name, response: { 200: Type.Object({ message: Type.String() }) } } },
    async (request) => {
      backups.remove(request.params.name);
      return { message: `Backup ${request.params.name} deleted.` };
    },
  );
};
