import { Type } from '@fastify/type-provider-typebox';
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
const Name = Type.Object({
  name: Type.String({
    pattern: BACKUP_NAME_PATTERN,
    maxLength: 64,
    description: 'A name from the list, e.g. plinth-backup-2026-11-28T05-30-00-123Z.tar.gz',
  }),
});

/** Backups kept on the server (BACKUP_DIR): start one, list, download, delete. */
export const keptBackupRoutes: RoutePlugin<'backups'> = async (app, { deps }) => {
  const backups = deps.backups;
  app.get(
    '/api/admin/backups',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        security,
        summary: 'The backups kept on the server (BACKUP_DIR), newest first',
        response: { 200: Type.Array(Kept) },
      },
    },
    () => backups.list(),
  );
  app.post(
    '/api/admin/backups',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        security,
        summary:
          'Starts a backup kept on the server (one at a time); GET /api/admin/backups shows it running, then ready',
        response: { 202: Kept },
      },
    },
    async (_request, reply) => reply.status(202).send(backups.start()),
  );
  app.get(
    '/api/admin/backups/:name',
    {
      config: { access: 'admin' },
      schema: { tags, security, summary: 'Downloads a ready backup (.tar.gz)', params: Name },
    },
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
    {
      config: { access: 'admin' },
      schema: {
        tags,
        security,
        summary: 'Deletes a ready or failed backup',
        params: Name,
        response: { 200: Type.Object({ message: Type.String() }) },
      },
    },
    async (request) => {
      backups.remove(request.params.name);
      return { message: `Backup ${request.params.name} deleted.` };
    },
  );
};
