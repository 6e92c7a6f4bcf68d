import { Type } from '@fastify/type-provider-typebox';
import { Message, MessageQuery } from '../../../email/schema.js';
import type { RoutePlugin } from '../../types.js';

const tags = ['email'];
const Id = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The queued mail (admin): what was sent, is waiting or failed, and resending a failed one. */
export const emailMessageRoutes: RoutePlugin<'email'> = async (app, { deps }) => {
  const email = deps.email;
  app.get(
    '/api/email/messages',
    {
      schema: {
        tags,
        summary: 'Mail sent through the queue, newest first: status, attempts, last error (metadata only)',
        querystring: MessageQuery,
        response: { 200: Type.Array(Message) },
      },
    },
    (request) => email.listMessages(request.query.status, request.query.limit, request.query.offset),
  );
  app.get(
    '/api/email/messages/:id',
    { schema: { tags, summary: 'One queued mail (metadata only)', params: Id, response: { 200: Message } } },
    (request) => email.getMessage(request.params.id),
  );
  app.post(
    '/api/email/messages/:id/resend',
    {
      schema: {
        tags,
        summary: 'Queue a failed mail again, with a fresh set of attempts',
        params: Id,
        response: { 200: Message },
      },
    },
    (request) => email.resend(request.params.id),
  );
};
