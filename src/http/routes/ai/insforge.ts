import { Readable } from 'node:stream';
import { Type } from '@fastify/type-provider-typebox';
import { AppError } from '../../../errors/index.js';
import { fromInsforgeChat, toInsforgeChat, toInsforgeImages, toInsforgeStream } from '../../../ai/insforge.js';
import type { RoutePlugin } from '../../types.js';
import { callContext, unlessGone } from './context.js';

const open = { additionalProperties: true } as const;
const tags = ['ai'];
const Model = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'Upstream model id; defaults to AI_DEFAULT_MODEL.',
});
const Message = Type.Object(
  {
    role: Type.Enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.Object({}, open), { maxItems: 1000 }), Type.Null()]),
    ),
  },
  open,
);
const Usage = Type.Object(
  { promptTokens: Type.Integer(), completionTokens: Type.Integer(), totalTokens: Type.Integer() },
  open,
);
const InsforgeChat = Type.Object(
  {
    text: Type.String(),
    tool_calls: Type.Optional(Type.Array(Type.Unknown())),
    annotations: Type.Optional(Type.Array(Type.Unknown())),
    metadata: Type.Object({ model: Type.String(), usage: Usage }),
  },
  {
    description:
      'With stream: true the answer is text/event-stream: data: {"chunk": "..."} events, then data: {"done": true}.',
  },
);
const EmbeddingInput = Type.Union([
  Type.String({ maxLength: 1_000_000 }),
  Type.Array(
    Type.Union([
      Type.String({ maxLength: 1_000_000 }),
      Type.Integer(),
      Type.Array(Type.Integer(), { maxItems: 100_000 }),
    ]),
    { minItems: 1, maxItems: 2048 },
  ),
]);
const CHAT_BODY_LIMIT = 20 * 1024 * 1024;

/**
 * The AI paths of the InsForge SDK, beside the spec's OpenAI-shaped ones: chat/completion and
 * image/generation (singular, InsForge's shapes), and embeddings (OpenAI's shape plus InsForge's
 * metadata, so the openai package and the SDK both read it). Same access, models and budgets.
 */
export const aiInsforgeRoutes: RoutePlugin<'ai' | 'config'> = async (app, { deps }) => {
  const gateway = deps.ai;

  app.post(
    '/api/ai/chat/completion',
    {
      config: { access: 'any' },
      bodyLimit: Math.max(deps.config.bodyLimitBytes, CHAT_BODY_LIMIT),
      schema: {
        tags,
        summary: 'Chat completion in InsForge\'s shape ({text, metadata}); stream: true answers {"chunk"} events',
        description:
          "camelCase options (maxTokens, topP, toolChoice, parallelToolCalls) are mapped to OpenAI's; webSearch, fileParser and thinking are ignored.",
        body: Type.Object(
          {
            model: Type.Optional(Model),
            messages: Type.Array(Message, { minItems: 1, maxItems: 10_000 }),
            stream: Type.Optional(Type.Boolean()),
          },
          open,
        ),
        response: { 200: InsforgeChat },
      },
    },
    async (request, reply) => {
      const ctx = callContext(request, reply);
      const req = fromInsforgeChat(request.body);
      if (req.stream !== true) {
        const done = await unlessGone(request, reply, () => gateway.chat(ctx, req));
        return done && toInsforgeChat(done);
      }
      const frames = await unlessGone(request, reply, () => gateway.chatStream(ctx, req));
      if (!frames) return reply;
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no')
        .send(Readable.from(toInsforgeStream(frames)) as never);
    },
  );

  app.post(
    '/api/ai/image/generation',
    {
      config: { access: 'any' },
      schema: {
        tags,
        summary:
          'Image generation in InsForge\'s shape ({images: [{type: "imageUrl", imageUrl: "data:..."}], metadata})',
        body: Type.Object(
          {
            model: Type.Optional(Model),
            prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
            images: Type.Optional(Type.Array(Type.Unknown())),
          },
          open,
        ),
        response: {
          200: Type.Object({
            text: Type.Optional(Type.String()),
            images: Type.Array(Type.Object({ type: Type.String(), imageUrl: Type.String() })),
            metadata: Type.Object({}, open),
          }),
        },
      },
    },
    async (request, reply) => {
      const { images, ...rest } = request.body;
      if (images?.length) {
        throw new AppError('INVALID_INPUT', {
          message: "Input images (image editing) are not supported: the upstream speaks OpenAI's images/generations.",
          nextActions:
            'Send only model and prompt, or pass the image to a vision model through POST /api/ai/chat/completion.',
        });
      }
      const answer = await unlessGone(request, reply, () => gateway.images(callContext(request, reply), rest));
      return (
        answer &&
        toInsforgeImages(
          answer,
          rest.model ?? (answer.model as string | undefined) ?? deps.config.ai.defaultModel ?? '',
        )
      );
    },
  );

  app.post(
    '/api/ai/embeddings',
    {
      config: { access: 'any' },
      bodyLimit: Math.max(deps.config.bodyLimitBytes, CHAT_BODY_LIMIT),
      schema: {
        tags,
        summary: "Embeddings (OpenAI format; the answer also has InsForge's metadata {model, usage})",
        body: Type.Object(
          {
            model: Type.Optional(Model),
            input: EmbeddingInput,
            encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
            dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
          },
          { ...open, description: 'Other OpenAI parameters (user, ...) are passed through.' },
        ),
        response: {
          200: Type.Object(
            {
              object: Type.String(),
              data: Type.Array(
                Type.Object({
                  object: Type.String(),
                  embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
                  index: Type.Integer(),
                }),
              ),
              model: Type.String(),
              usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
              metadata: Type.Object({
                model: Type.String(),
                usage: Type.Object({ promptTokens: Type.Integer(), totalTokens: Type.Integer() }),
              }),
            },
            open,
          ),
        },
      },
    },
    async (request, reply) =>
      unlessGone(request, reply, () => gateway.embeddings(callContext(request, reply), request.body)),
  );
};
