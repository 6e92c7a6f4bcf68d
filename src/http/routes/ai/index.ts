import { Readable } from 'node:stream';
import { Type } from '@fastify/type-provider-typebox';
import type { RoutePlugin } from '../../types.js';
import { callContext, unlessGone } from './context.js';
import { aiInsforgeRoutes } from './insforge.js';

// Request bodies: the spec's fields are checked; every other OpenAI parameter passes through.
const Part = Type.Object({ type: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: true });
const Message = Type.Object(
  {
    role: Type.Enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(Part, { maxItems: 1000 }), Type.Null()])),
  },
  { additionalProperties: true },
);
const Model = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'Upstream model id; defaults to AI_DEFAULT_MODEL.',
});

const ChatBody = Type.Object(
  {
    model: Type.Optional(Model),
    messages: Type.Array(Message, { minItems: 1, maxItems: 10_000 }),
    stream: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: true,
    description: 'Other OpenAI parameters (temperature, max_tokens, tools, ...) are passed through.',
  },
);

const ImagesBody = Type.Object(
  {
    model: Type.Optional(Model),
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    size: Type.Optional(
      Type.String({
        pattern: '^([1-9][0-9]{0,4}x[1-9][0-9]{0,4}|auto)$',
        description: '<width>x<height>, e.g. 1024x1024',
      }),
    ),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
  },
  {
    additionalProperties: true,
    description: 'Other OpenAI parameters (quality, style, response_format, ...) are passed through.',
  },
);

const open = { additionalProperties: true } as const;
const Usage = Type.Object(
  { prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() },
  open,
);
const ChatCompletion = Type.Object(
  {
    id: Type.String(),
    object: Type.String(),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          message: Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Null()]) }, open),
          finish_reason: Type.Union([Type.String(), Type.Null()]),
        },
        open,
      ),
    ),
    usage: Usage,
  },
  {
    ...open,
    description:
      'With stream: true the answer is text/event-stream: OpenAI chat.completion.chunk events, then data: [DONE].',
  },
);
const ImagesAnswer = Type.Object(
  {
    created: Type.Integer(),
    data: Type.Array(Type.Object({ b64_json: Type.Optional(Type.String()), url: Type.Optional(Type.String()) }, open)),
  },
  open,
);

const UsageQuery = Type.Object({
  from: Type.Optional(
    Type.String({ format: 'date-time', description: 'Start of the period (inclusive); default: all time.' }),
  ),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End of the period (exclusive).' })),
  userId: Type.Optional(Type.String({ format: 'uuid' })),
});
/** The period and user of a usage query, as the gateway's reports take them. */
const usageRange = (q: { from?: string; to?: string; userId?: string }) => ({
  from: q.from ? new Date(q.from) : null,
  to: q.to ? new Date(q.to) : null,
  userId: q.userId ?? null,
});
const Num = Type.Number();
const Nullable = Type.Union([Type.String(), Type.Null()]);
const DailyReport = Type.Object({
  days: Type.Array(
    Type.Object({
      day: Type.String(),
      model: Type.String(),
      userId: Nullable,
      email: Nullable,
      caller: Type.String(),
      requests: Num,
      totalTokens: Num,
      images: Num,
    }),
  ),
});
const UsageReport = Type.Object({
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.Union([Type.String(), Type.Null()]),
  totals: Type.Object({
    requests: Num,
    errors: Num,
    promptTokens: Num,
    completionTokens: Num,
    totalTokens: Num,
    images: Num,
  }),
  usage: Type.Array(
    Type.Object({
      userId: Type.Union([Type.String(), Type.Null()]),
      email: Type.Union([Type.String(), Type.Null()]),
      caller: Type.String(),
      model: Type.String(),
      requests: Num,
      errors: Num,
      promptTokens: Num,
      completionTokens: Num,
      totalTokens: Num,
      images: Num,
      avgLatencyMs: Num,
    }),
  ),
});

// Vision prompts carry images as data URLs inside the messages: allow more than the app-wide limit.
const CHAT_BODY_LIMIT = 20 * 1024 * 1024;

const ModelList = Type.Object(
  {
    object: Type.String(),
    data: Type.Array(
      Type.Object({ id: Type.String(), object: Type.String(), created: Type.Integer(), owned_by: Type.String() }, open),
    ),
  },
  open,
);
const Today = Type.Object({
  date: Type.String({ description: 'The UTC day, YYYY-MM-DD' }),
  totalTokens: Num,
  budget: Type.Union([Num, Type.Null()], { description: 'AI_USER_DAILY_TOKENS, or null without a budget' }),
  remaining: Type.Union([Num, Type.Null()]),
});

/** POST /api/ai/chat/completions, POST /api/ai/images/generations, GET /api/ai/usage. */
export const aiRoutes: RoutePlugin<'ai' | 'config'> = async (app, { deps }) => {
  const gateway = deps.ai;
  await app.register(aiInsforgeRoutes, { deps });

  app.post(
    '/api/ai/chat/completions',
    {
      config: { access: 'any' },
      bodyLimit: Math.max(deps.config.bodyLimitBytes, CHAT_BODY_LIMIT),
      schema: {
        tags: ['ai'],
        summary: 'Chat completion through the OpenAI-compatible upstream (stream: true answers Server-Sent Events)',
        body: ChatBody,
        response: { 200: ChatCompletion },
      },
    },
    async (request, reply) => {
      const ctx = callContext(request, reply);
      if (request.body.stream !== true) return unlessGone(request, reply, () => gateway.chat(ctx, request.body));
      const frames = await unlessGone(request, reply, () => gateway.chatStream(ctx, request.body));
      if (!frames) return reply;
      return (
        reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-cache, no-transform')
          .header('x-accel-buffering', 'no') // tell nginx-style proxies not to buffer the stream
          // A stream skips the JSON serializer; the 200 schema describes the non-streaming answer.
          .send(Readable.from(frames) as never)
      );
    },
  );

  app.post(
    '/api/ai/images/generations',
    {
      config: { access: 'any' },
      schema: {
        tags: ['ai'],
        summary: 'Image generation through the OpenAI-compatible upstream',
        body: ImagesBody,
        response: { 200: ImagesAnswer },
      },
    },
    async (request, reply) =>
      unlessGone(request, reply, () => gateway.images(callContext(request, reply), request.body)),
  );

  app.get(
    '/api/ai/status',
    {
      config: { access: 'any' },
      schema: {
        tags: ['ai'],
        summary:
          'Whether AI is configured (always 200, the upstream is not called): {configured, provider (admins only), models, defaultModel}',
        response: {
          200: Type.Object({
            configured: Type.Boolean(),
            provider: Type.Optional(Type.String({ description: 'The upstream host (AI_BASE_URL); admins only' })),
            models: Type.Union([Type.Array(Type.String()), Type.Null()], {
              description: 'AI_MODELS, or null (any model of the upstream; GET /api/ai/models lists them)',
            }),
            defaultModel: Type.Union([Type.String(), Type.Null()], { description: 'AI_DEFAULT_MODEL' }),
          }),
        },
      },
    },
    async (request) => gateway.status(request.identity.kind === 'admin'),
  );

  app.get(
    '/api/ai/models',
    {
      config: { access: 'any' },
      schema: {
        tags: ['ai'],
        summary: 'Models callers may use: AI_MODELS, else the upstream list',
        response: { 200: ModelList },
      },
    },
    async (request, reply) => unlessGone(request, reply, () => gateway.models(callContext(request, reply))),
  );

  app.get(
    '/api/ai/usage/me',
    {
      config: { access: 'any' },
      schema: {
        tags: ['ai'],
        summary: "The caller's AI tokens today (UTC) and what is left of the daily budget",
        response: { 200: Today },
      },
    },
    async (request, reply) => gateway.today(callContext(request, reply)),
  );

  app.get(
    '/api/ai/usage/daily',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['ai'],
        summary: 'AI usage per UTC day, model and user (admin)',
        querystring: UsageQuery,
        response: { 200: DailyReport },
      },
    },
    async (request) => {
      return { days: await gateway.daily(usageRange(request.query)) };
    },
  );

  app.get(
    '/api/ai/usage',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['ai'],
        summary: 'AI usage summed per user and model (admin)',
        querystring: UsageQuery,
        response: { 200: UsageReport },
      },
    },
    async (request) => {
      const { from, to } = request.query;
      const usage = await gateway.report(usageRange(request.query));
      const sum = (k: 'requests' | 'errors' | 'promptTokens' | 'completionTokens' | 'totalTokens' | 'images') =>
        usage.reduce((n, u) => n + u[k], 0);
      return {
        from: from ?? null,
        to: to ?? null,
        totals: {
          requests: sum('requests'),
          errors: sum('errors'),
          promptTokens: sum('promptTokens'),
          completionTokens: sum('completionTokens'),
          totalTokens: sum('totalTokens'),
          images: sum('images'),
        },
        usage,
      };
    },
  );
};
