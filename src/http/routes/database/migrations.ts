import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { NAME_PATTERN, VERSION_PATTERN } from '../../../database/migrations/service.js';

const Version = Type.String({
  pattern: VERSION_PATTERN,
  description: 'digits, e.g. 20260101120000; applied in numeric order',
});
const Name = Type.String({ pattern: NAME_PATTERN, description: 'letters, digits, _ and -' });
const Sql = Type.String({ minLength: 1, maxLength: 1_000_000 });
const Applied = Type.Object({
  version: Type.String(),
  name: Type.String(),
  checksum: Type.String({ description: 'sha256 of the SQL text, hex' }),
  statements: Type.Integer(),
  appliedAt: Type.String(),
});
const Risk = Type.Union([Type.Literal('SAFE'), Type.Literal('WARNING'), Type.Literal('DANGER')]);
const admin = { access: 'admin' as const };

/** The app's versioned migrations (docs/database.md "Migrations"): list, apply, dry run. */
export const migrationRoutes: RoutePlugin<'migrations'> = async (app, { deps }) => {
  const { migrations } = deps;

  app.get(
    '/api/database/migrations',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'The applied migrations, in version order',
        response: { 200: Type.Object({ migrations: Type.Array(Applied) }) },
      },
    },
    async () => ({ migrations: await migrations.list() }),
  );

  app.post(
    '/api/database/migrations',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'Apply one migration in one transaction as the owner role; 409 if its version is applied (or drifted)',
        body: Type.Object({ version: Version, name: Name, sql: Sql }),
        response: { 201: Type.Object({ message: Type.String(), migration: Applied }) },
      },
    },
    async (request, reply) => {
      const migration = await migrations.apply(request.body);
      return reply.status(201).send({ message: `Migration ${migration.version} applied`, migration });
    },
  );

  app.post(
    '/api/database/migrations/dry-run',
    {
      config: admin,
      schema: {
        tags: ['database'],
        summary: 'Parse a migration and say how risky it is, without running it',
        body: Type.Object({ sql: Sql, version: Type.Optional(Version), name: Type.Optional(Name) }),
        response: {
          200: Type.Object({
            riskLevel: Risk,
            reasons: Type.Array(Type.String()),
            statements: Type.Array(
              Type.Object({
                sql: Type.String(),
                kind: Type.String(),
                riskLevel: Risk,
                reasons: Type.Array(Type.String()),
              }),
            ),
            checksum: Type.String(),
            version: Type.Union([Type.String(), Type.Null()]),
            status: Type.Union([Type.Literal('pending'), Type.Literal('applied'), Type.Literal('drift'), Type.Null()]),
          }),
        },
      },
    },
    async (request) => migrations.dryRun(request.body.sql, request.body.version ?? null),
  );
};
