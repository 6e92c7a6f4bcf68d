import { Type } from 'typebox';
import { tool } from '../types.js';
import { table } from '../format.js';

/** Users and keys: the auth service of /api/auth/users and the anon key of /api/auth/tokens/anon. */
export const authTools = [
  tool<{ limit: number; offset: number; search?: string }>({
    name: 'list-users',
    description: 'List users (id, email, verified, providers), paged; search matches the email.',
    input: Type.Object({
      limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
      offset: Type.Integer({ minimum: 0, default: 0 }),
      search: Type.Optional(Type.String({ maxLength: 320 })),
    }),
    readOnly: true,
    run: async (a, ctx) => {
      const r = await ctx.services.auth.listUsers(a);
      return table(
        r.data.map((u) => ({
          id: u.id,
          email: u.email,
          emailVerified: u.emailVerified,
          providers: u.providers.join(','),
          createdAt: u.createdAt,
        })),
        { offset: a.offset, limit: a.limit, total: r.pagination.total },
      );
    },
  }),
  tool<{ email: string; password: string; name?: string; emailVerified: boolean }>({
    name: 'create-user',
    description:
      'Create a user with email and password (e.g. test users to try RLS policies with select-records / write-records). Answers the id.',
    input: Type.Object({
      email: Type.String({ minLength: 3, maxLength: 320 }),
      password: Type.String({ minLength: 1, maxLength: 1024 }),
      name: Type.Optional(Type.String({ maxLength: 256 })),
      emailVerified: Type.Boolean({ default: true }),
    }),
    readOnly: false,
    run: async (a, ctx) => {
      const u = await ctx.services.auth.createUser(a);
      return `User created: id ${u.id}, email ${u.email}.`;
    },
  }),
  tool<Record<string, never>>({
    name: 'get-anon-key',
    description:
      'The anon key: the public key client apps send (apikey header, or anonKey of @insforge/sdk). It does not expire; RLS policies decide what it may do.',
    input: Type.Object({}),
    readOnly: true,
    run: async (_a, ctx) => ctx.services.anonKey,
  }),
];
