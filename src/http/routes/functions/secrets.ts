import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { MAX_SECRET_BYTES, SECRET_NAME_PATTERN } from '../../../functions/secrets.js';
import { SLUG_PATTERN } from '../../../functions/slug.js';

const tags = ['functions'];
const Secret = Type.Object({
  name: Type.String(),
  preview: Type.String({ description: 'A masked preview; the value is never returned' }),
  functions: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'Slugs of the functions that may read it; null: every function',
  }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const NameParams = Type.Object({
  name: Type.String({ pattern: SECRET_NAME_PATTERN, description: 'An environment variable name' }),
});

/** Admin management of the secrets functions read with Deno.env.get(name): /api/secrets. */
export const secretRoutes: RoutePlugin<'functions'> = async (app, { deps }) => {
  const fns = deps.functions;

  app.get(
    '/api/secrets',
    { schema: { tags, summary: 'List secrets (masked)', response: { 200: Type.Array(Secret) } } },
    async () => fns.secrets.list(),
  );

  app.get(
    '/api/secrets/:name',
    { schema: { tags, summary: 'One secret (masked)', params: NameParams, response: { 200: Secret } } },
    async (request) => fns.secrets.get(request.params.name),
  );

  app.put(
    '/api/secrets/:name',
    {
      schema: {
        tags,
        summary: 'Create or replace a secret; warm functions reload with it',
        params: NameParams,
        body: Type.Object(
          {
            value: Type.String({ maxLength: MAX_SECRET_BYTES }),
            functions: Type.Optional(
              Type.Union(
                [
                  Type.Array(Type.String({ pattern: SLUG_PATTERN }), { maxItems: 1000, uniqueItems: true }),
                  Type.Null(),
                ],
                {
                  description: 'Limit the secret to these function slugs; absent or null: every function',
                },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ success: Type.Boolean(), secret: Secret }),
          201: Type.Object({ success: Type.Boolean(), secret: Secret }),
        },
      },
    },
    async (request, reply) => {
      const { secret, created } = await fns.putSecret(
        request.params.name,
        request.body.value,
        request.body.functions ?? null,
      );
      return reply.status(created ? 201 : 200).send({ success: true, secret });
    },
  );

  app.delete(
    '/api/secrets/:name',
    {
      schema: {
        tags,
        summary: 'Delete a secret',
        params: NameParams,
        response: { 200: Type.Object({ success: Type.Boolean(), message: Type.String() }) },
      },
    },
    async (request) => {
      await fns.removeSecret(request.params.name);
      return { success: true, message: `Secret "${request.params.name}" deleted.` };
    },
  );
};
