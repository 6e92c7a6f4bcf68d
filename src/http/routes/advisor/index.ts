import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';

const admin = { access: 'admin' as const };
const Issue = Type.Object({
  key: Type.String(),
  rule: Type.String(),
  category: Type.String({ description: 'security, performance or health' }),
  severity: Type.String({ description: 'critical, warning or info' }),
  object: Type.Object({ type: Type.String(), name: Type.String() }),
  title: Type.String(),
  why: Type.String(),
  fixSql: Type.Union([Type.String(), Type.Null()]),
  suppressed: Type.Boolean(),
  firstSeen: Type.String(),
  lastSeen: Type.String(),
});
const Suppression = Type.Object({ key: Type.String(), reason: Type.String(), createdAt: Type.String() });

/** The security and performance advisor (docs/advisor.md). */
export const advisorRoutes: RoutePlugin<'advisor'> = async (app, { deps }) => {
  const { advisor } = deps;

  app.post(
    '/api/advisor/scan',
    {
      config: admin,
      schema: {
        tags: ['advisor'],
        summary: 'Run every rule now; the answer lists all findings, suppressed ones marked',
        response: { 200: Type.Object({ scannedAt: Type.String(), rules: Type.Integer(), issues: Type.Array(Issue) }) },
      },
    },
    async () => advisor.scan(),
  );

  app.get(
    '/api/advisor/issues',
    {
      config: admin,
      schema: {
        tags: ['advisor'],
        summary: 'The findings of the last scan, most severe first',
        querystring: Type.Object({
          includeSuppressed: Type.Optional(Type.Boolean()),
          category: Type.Optional(
            Type.Union([Type.Literal('security'), Type.Literal('performance'), Type.Literal('health')]),
          ),
        }),
        response: { 200: Type.Object({ issues: Type.Array(Issue) }) },
      },
    },
    async (request) => {
      const issues = await advisor.issues(request.query.includeSuppressed ?? false);
      return { issues: request.query.category ? issues.filter((i) => i.category === request.query.category) : issues };
    },
  );

  app.get(
    '/api/advisor/suppressions',
    {
      config: admin,
      schema: {
        tags: ['advisor'],
        summary: 'The silenced findings',
        response: { 200: Type.Object({ suppressions: Type.Array(Suppression) }) },
      },
    },
    async () => ({ suppressions: await advisor.suppressions() }),
  );

  app.post(
    '/api/advisor/suppressions',
    {
      config: admin,
      schema: {
        tags: ['advisor'],
        summary: 'Silence a finding by its key, with the reason',
        body: Type.Object({
          key: Type.String({ minLength: 3, maxLength: 500 }),
          reason: Type.String({ minLength: 1, maxLength: 1000 }),
        }),
        response: { 201: Type.Object({ message: Type.String(), key: Type.String() }) },
      },
    },
    async (request, reply) => {
      await advisor.suppress(request.body.key, request.body.reason);
      return reply.status(201).send({ message: 'Finding suppressed', key: request.body.key });
    },
  );

  app.delete(
    '/api/advisor/suppressions/:key',
    {
      config: admin,
      schema: {
        tags: ['advisor'],
        summary: 'Report a suppressed finding again',
        params: Type.Object({ key: Type.String({ maxLength: 500 }) }),
        response: { 200: Type.Object({ message: Type.String(), key: Type.String() }) },
      },
    },
    async (request) => {
      await advisor.unsuppress(request.params.key);
      return { message: 'Suppression removed', key: request.params.key };
    },
  );
};
