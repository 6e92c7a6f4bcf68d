import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';
import { SECRET_NAME_PATTERN } from '../../functions/secrets.js';

const Name = Type.String({ pattern: SECRET_NAME_PATTERN, description: 'Letters, digits and _, e.g. STRIPE_KEY' });

/** Function secrets (the service of /api/secrets). Values go in, never come out. */
export const secretTools = [
  tool<Record<string, never>>({
    name: 'list-secrets',
    description: 'List the names of the function secrets and which functions may read them. Values are never shown.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) =>
      table(
        (await ctx.services.functions.secrets.list()).map((s) => ({
          name: s.name,
          functions: s.functions?.join(', ') ?? '(all)',
          updated_at: s.updated_at,
        })),
      ),
  }),
  tool<{ name: string; value: string; functions?: string[] }>({
    name: 'set-secret',
    description:
      'Create or replace a secret functions read with Deno.env.get(name). Optionally only for the listed function slugs.',
    input: Type.Object({
      name: Name,
      value: Type.String({ minLength: 1, maxLength: 64 * 1024 }),
      functions: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })),
    }),
    readOnly: false,
    run: async (a, ctx) => {
      const { created } = await ctx.services.functions.putSecret(a.name, a.value, a.functions ?? null);
      return `Secret ${a.name} ${created ? 'created' : 'replaced'}.`;
    },
  }),
  tool<{ name: string }>({
    name: 'delete-secret',
    description: 'Delete a function secret by name; functions stop seeing it on their next start.',
    input: Type.Object({ name: Name }),
    readOnly: false,
    destructive: true,
    run: async ({ name }, ctx) => {
      await ctx.services.functions.removeSecret(name);
      return `Secret ${name} deleted.`;
    },
  }),
];
