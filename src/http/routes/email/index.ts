import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { TEMPLATE_KEYS } from '../../../email/templates.js';
import { SendRawBody } from '../../../email/schema.js';
import { emailMessageRoutes } from './messages.js';

const tags = ['email'];
const SendRaw = SendRawBody;
const Template = Type.Object({
  key: Type.String(),
  subject: Type.String(),
  text: Type.String(),
  html: Type.Union([Type.String(), Type.Null()]),
  custom: Type.Boolean({ description: 'false: the built-in text' }),
  updatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const TemplateBody = Type.Object(
  {
    subject: Type.String({ minLength: 1, maxLength: 500 }),
    text: Type.String({ minLength: 1, maxLength: 100_000 }),
    html: Type.Optional(Type.Union([Type.String({ maxLength: 500_000 }), Type.Null()])),
  },
  { additionalProperties: false },
);
const Key = Type.Object({ key: Type.String({ description: TEMPLATE_KEYS.join(', ') }) });
const Preview = Type.Object(
  {
    values: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z]{1,32}$' }), Type.String({ maxLength: 1000 }), { maxProperties: 20 }),
    ),
    draft: Type.Optional(TemplateBody),
  },
  { additionalProperties: false },
);
const SAMPLE = { code: '123456', minutes: '15', email: 'someone@example.com' };

/** The email API: POST /api/email/send-raw (InsForge's shape) and the auth email templates (admin). */
export const emailRoutes: RoutePlugin = async (app, opts) => {
  const email = opts.deps.email;
  await app.register(emailMessageRoutes, opts);
  app.post(
    '/api/email/send-raw',
    {
      config: {
        access: 'user',
        functionToken: true,
        refusalHint:
          'Send with the admin API key, or as a signed-in user when an admin allows it (EMAIL_ALLOW_USERS=true).',
      },
      schema: {
        tags,
        summary: 'Send an email through the configured SMTP server',
        body: SendRaw,
        response: { 200: Type.Object({}) },
      },
    },
    async (request) => {
      await email.sendRaw(request.identity, request.body, request.log);
      return {};
    },
  );
  app.get(
    '/api/email/templates',
    { schema: { tags, summary: 'The auth email templates', response: { 200: Type.Array(Template) } } },
    () => email.templates.list(),
  );
  app.get(
    '/api/email/templates/:key',
    { schema: { tags, summary: 'One template', params: Key, response: { 200: Template } } },
    (request) => email.templates.get(request.params.key),
  );
  app.put(
    '/api/email/templates/:key',
    {
      schema: {
        tags,
        summary: 'Edit a template ({{code}}, {{minutes}}, {{email}})',
        params: Key,
        body: TemplateBody,
        response: { 200: Template },
      },
    },
    (request) => email.templates.put(request.params.key, request.body),
  );
  app.delete(
    '/api/email/templates/:key',
    { schema: { tags, summary: 'Back to the built-in text', params: Key, response: { 200: Template } } },
    (request) => email.templates.reset(request.params.key),
  );
  app.post(
    '/api/email/templates/:key/preview',
    {
      schema: {
        tags,
        summary: 'The mail a template (stored or a draft) makes, with sample values',
        params: Key,
        body: Preview,
        response: {
          200: Type.Object({
            subject: Type.String(),
            text: Type.String(),
            html: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    (request) => email.templates.render(request.params.key, { ...SAMPLE, ...request.body.values }, request.body.draft),
  );
};
