import { Type } from '@fastify/type-provider-typebox';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { AppError } from '../../../errors/index.js';
import { onlineArchive } from '../../../db/embedded/backup.js';
import type { EmbeddedCluster } from '../../../db/embedded/index.js';
import { effectiveConfig } from '../../../operations.js';
import type { RoutePlugin } from '../../types.js';

// Only these fields leave the server (the serializer drops anything else a row might carry).
const ConfigRow = Type.Object({
  name: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.Literal('env'), Type.Literal('default'), Type.Literal('derived')]),
  secret: Type.Boolean(),
  set: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String()),
});

/** Operator endpoints: the effective configuration, a backup of the running server. */
export const adminRoutes: RoutePlugin = async (app, { deps }) => {
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
        summary: 'A backup of the running server (embedded database + local storage) as a .tar.gz; restore it with "npm run plinth -- restore <file>"',
        security: [{ apiKey: [] }],
      },
    },
    async (_request, reply) => {
      const cluster = (deps.db as { cluster?: EmbeddedCluster }).cluster;
      if (!cluster) {
        throw new AppError('BACKUP_UNAVAILABLE', {
          message: `This server's database is ${deps.db.kind === 'pglite' ? 'PGlite (DATABASE_URL=pglite://)' : 'a Postgres server (DATABASE_URL)'}, not the embedded Postgres: Plinth cannot copy its files.`,
          nextActions:
            deps.db.kind === 'pglite'
              ? 'Stop the server and copy DATA_DIR, or move to the embedded default (unset DATABASE_URL) and use this endpoint.'
              : 'Back the database up with "pg_dump -Fc -f plinth.dump $DATABASE_URL" (restore with pg_restore); for S3 storage use the provider\'s versioning or "aws s3 sync". README, Backups.',
        });
      }
      const s3 = Boolean(deps.config.storage.s3);
      const gzip = createGzip();
      const chunks = onlineArchive({ dataDir: deps.config.dataDir, plinthVersion: deps.version, includeStorage: !s3, url: cluster.url('postgres') });
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
      reply.header('x-plinth-backup-storage', s3 ? 's3 (not included)' : 'local');
      return reply.send(gzip);
    },
  );
};
