import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { UserSchema } from './schemas.js';

const UserId = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** User administration (admin only). */
export const authAdminRoutes: RoutePlugin<'auth' | 'userAdmin'> = async (app, { deps }) => {
  const auth = deps.auth;
  const admin = { config: { access: 'admin' as const } };
  const security = [{ apiKey: [] }];

  app.get(
    '/api/auth/users',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: 'List users, oldest first',
        security,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
          search: Type.Optional(Type.String({ maxLength: 320, description: 'Part of the email address.' })),
        }),
        response: {
          200: Type.Object({
            data: Type.Array(UserSchema),
            pagination: Type.Object({ offset: Type.Integer(), limit: Type.Integer(), total: Type.Integer() }),
          }),
        },
      },
    },
    async (request) => auth.listUsers(request.query),
  );

  app.get(
    '/api/auth/users/:id',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: 'One user',
        security,
        params: UserId,
        response: { 200: Type.Object({ user: UserSchema }) },
      },
    },
    async (request) => ({ user: await auth.getUser(request.params.id) }),
  );

  app.delete(
    '/api/auth/users/:id',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: 'Delete a user; its sessions end at once',
        security,
        params: UserId,
        response: { 200: Type.Object({ message: Type.String() }) },
      },
    },
    async (request) => {
      await auth.deleteUser(request.params.id);
      return { message: 'User deleted; its sessions have ended.' };
    },
  );

  app.delete(
    '/api/auth/users/:id/sessions',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: "End all of a user's sessions (access and refresh tokens stop working)",
        security,
        params: UserId,
        response: { 200: Type.Object({ message: Type.String(), revoked: Type.Integer() }) },
      },
    },
    async (request) => {
      const revoked = await auth.revokeSessions(request.params.id);
      return { message: `${revoked} session(s) ended; the user signs in again to get new tokens.`, revoked };
    },
  );

  app.patch(
    '/api/auth/users/:id',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: "Set a user's name, mark the email verified, ban or unban (a ban ends every session)",
        security,
        params: UserId,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ maxLength: 200 })),
            emailVerified: Type.Optional(Type.Literal(true)),
            banned: Type.Optional(
              Type.Boolean({
                description: 'true bans (no sign-in of any kind, sessions end at once), false lifts the ban',
              }),
            ),
            bannedUntil: Type.Optional(
              Type.String({
                format: 'date-time',
                description:
                  'With banned: true, when the ban ends (in the future); without it the ban lasts until lifted',
              }),
            ),
            banReason: Type.Optional(
              Type.String({
                maxLength: 500,
                description: "With banned: true, the admin's note (not shown to the user)",
              }),
            ),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Type.Object({ user: UserSchema }) },
      },
    },
    async (request) => ({ user: await deps.userAdmin.update(request.params.id, request.body) }),
  );

  app.get(
    '/api/auth/users/:id/sessions',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: "A user's live sessions (newest first, at most 100)",
        security,
        params: UserId,
        response: {
          200: Type.Object({
            sessions: Type.Array(
              Type.Object({
                id: Type.String(),
                createdAt: Type.String(),
                expiresAt: Type.String(),
                ip: Type.Union([Type.String(), Type.Null()]),
                userAgent: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
          }),
        },
      },
    },
    async (request) => ({ sessions: await deps.userAdmin.sessions(request.params.id) }),
  );

  app.get(
    '/api/auth/users/:id/identities',
    {
      ...admin,
      schema: {
        tags: ['auth'],
        summary: "A user's sign-in identities (OAuth and OpenID Connect providers)",
        security,
        params: UserId,
        response: {
          200: Type.Object({
            identities: Type.Array(
              Type.Object({
                provider: Type.String(),
                email: Type.Union([Type.String(), Type.Null()]),
                lastSignInAt: Type.String(),
              }),
            ),
          }),
        },
      },
    },
    async (request) => ({ identities: await deps.userAdmin.identities(request.params.id) }),
  );
};
