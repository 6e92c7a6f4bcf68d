import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { CreateFunction, FunctionSlug, FunctionStatus, UpdateFunction } from '../../../functions/schemas.js';

const tags = ['functions'];
/** A user who GETs a function most likely wants to call it: say how. */
const CALL_INSTEAD =
  'Reading and managing functions needs the admin API key. To call a function, send POST /api/functions/{slug} with your token, or any method to /functions/{slug}.';
const Status = FunctionStatus;
const fields = {
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  status: Status,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  deployed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};
const Dependency = Type.Object({
  specifier: Type.String({ description: 'As the code imports it, e.g. npm:@insforge/sdk or npm:zod@3' }),
  resolved: Type.String({ description: 'What it resolved to at deploy, e.g. npm:zod@3.25.76 (a URL as it is)' }),
});
const FunctionSummary = Type.Object(fields);
const FunctionDetail = Type.Object({
  ...fields,
  code: Type.String(),
  dependencies: Type.Array(Dependency, {
    description: 'The npm:, jsr: and https: imports of the saved code, resolved and bundled at deploy',
  }),
});
const Saved = Type.Object({ success: Type.Boolean(), function: FunctionDetail });
const SlugParams = Type.Object({ slug: FunctionSlug });
const CODE_BODY_LIMIT = 8 * 1024 * 1024;

/** Admin CRUD of functions and their logs: /api/functions. */
export const functionAdminRoutes: RoutePlugin<'functions'> = async (app, { deps }) => {
  const fns = deps.functions;

  app.get(
    '/api/functions',
    {
      schema: { tags, summary: 'List functions (without code)', response: { 200: Type.Array(FunctionSummary) } },
      config: { refusalHint: CALL_INSTEAD },
    },
    async () => fns.list(),
  );

  app.post(
    '/api/functions',
    {
      bodyLimit: CODE_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Create a function; the code is checked, the slug made from the name when absent',
        body: CreateFunction,
        response: { 201: Saved },
      },
    },
    async (request, reply) => {
      const fn = await fns.create(request.body);
      return reply.status(201).send({ success: true, function: fn as typeof fn & { code: string } });
    },
  );

  app.get(
    '/api/functions/:slug',
    {
      schema: { tags, summary: 'A function with its code', params: SlugParams, response: { 200: FunctionDetail } },
      config: { refusalHint: CALL_INSTEAD },
    },
    async (request) => (await fns.get(request.params.slug)) as Awaited<ReturnType<typeof fns.get>> & { code: string },
  );

  app.put(
    '/api/functions/:slug',
    {
      bodyLimit: CODE_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Update a function; changed code is checked and replaces the warm worker',
        params: SlugParams,
        body: UpdateFunction,
        response: { 200: Saved },
      },
    },
    async (request) => {
      const fn = await fns.update(request.params.slug, request.body);
      return { success: true, function: fn as typeof fn & { code: string } };
    },
  );

  app.delete(
    '/api/functions/:slug',
    {
      schema: {
        tags,
        summary: 'Delete a function',
        params: SlugParams,
        response: { 200: Type.Object({ success: Type.Boolean(), message: Type.String() }) },
      },
    },
    async (request) => {
      await fns.remove(request.params.slug);
      return { success: true, message: `Function "${request.params.slug}" deleted.` };
    },
  );

  app.get(
    '/api/functions/:slug/logs',
    {
      schema: {
        tags,
        summary: "The function's latest console output and errors, oldest first (with after: only newer lines)",
        params: SlugParams,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          after: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: Number.MAX_SAFE_INTEGER,
              description: 'The id of the last line seen.',
            }),
          ),
        }),
        response: {
          200: Type.Object({
            logs: Type.Array(
              Type.Object({
                id: Type.Integer(),
                timestamp: Type.String({ format: 'date-time' }),
                level: Type.String(),
                message: Type.String(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => ({
      logs: await fns.logs(request.params.slug, request.query.limit, request.query.after ?? null),
    }),
  );
};
