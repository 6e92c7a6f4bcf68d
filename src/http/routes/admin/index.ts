import { Type } from '@fastify/type-provider-typebox';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { AppError } from '../../../errors/index.js';
import { effectiveConfig, type RunningServer } from '../../../config/running.js';
import { backupName } from '../../../admin/backups.js';
import type { RoutePlugin } from '../../types.js';
import { keptBackupRoutes } from './backups.js';

// Only these fields leave the server (the serializer drops anything else a row might carry).
const ConfigRow = Type.Object({
  name: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.Literal('env'), Type.Literal('default'), Type.Literal('derived')]),
  secret: Type.Boolean(),
  set: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String()),
});

/** Operator endpoints: the effective configuration; a backup of the running server, streamed or kept on the server. */
export const adminRoutes: RoutePlugin<'backups' | keyof RunningServer> = async (app, { deps }) => {
  app.get(
    '/api/admin/config',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'The configuration the server runs with: every variable it reads (value, source env or default) and facts derived from it (database, storage, realtime adapter, jobs, SMTP, AI, OAuth providers, version). Secrets are never returned: their value is "****" or null, with set true/false; passwords in URLs show as "****"',
        security: [{ apiKey: [] }],
        response: { 200: Type.Object({ variables: Type.Array(ConfigRow) }) },
      },
    },
    async () => ({ variables: effectiveConfig(deps) }),
  );
  app.post(
    '/api/admin/backup',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'A backup of the running server (embedded database + local storage) as a .tar.gz; restore it with "npm run plinth -- restore <file>"',
        security: [{ apiKey: [] }],
      },
    },
    async (_request, reply) => {
      const chunks = deps.backups.archive();
      const gzip = createGzip();
      // The first chunk before the headers: a backup that cannot start (no connection, a
      // backup already running in that session) answers an error envelope, not a 200.
      const first = await chunks.next().catch((err: unknown) => {
        throw new AppError('SERVICE_UNAVAILABLE', {
          message: `The backup could not start: ${err instanceof Error ? err.message : String(err)}`,
          cause: err,
        });
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
      reply.header('content-type', 'application/gzip');
      reply.header('content-disposition', `attachment; filename="${backupName(new Date())}"`);
      reply.header('x-plinth-backup-storage', deps.backups.storage === 's3' ? 's3 (not included)' : 'local');
      return reply.send(gzip);
    },
  );
  await keptBackupRoutes(app, { deps });
};
