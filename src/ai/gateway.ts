import type { Config } from '../config/index.js';
import { AppError } from '../errors/index.js';
import { ClientGoneError, type AiUpstream, type Json } from './upstream.js';
import { redactError } from './redact.js';
import {
  promptChars,
  shapeChat,
  shapeImages,
  shapeModels,
  type ChatCompletion,
  type ImagesAnswer,
  type ModelList,
} from './shape.js';
import type { DailyUsage, UsageLine, UsageQuery } from './usage-store.js';
import { shapeEmbeddings, type EmbeddingsAnswer, type EmbeddingsRequest } from './embeddings.js';
import { relayStream } from './relay.js';
import type { CallContext, MeteredCall, UsageMeter } from './usage.js';

export type { CallContext } from './usage.js';

export interface ChatMessage {
  role: string;
  content?: unknown;
  [k: string]: unknown;
}

export interface ChatRequest {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  [k: string]: unknown;
}

export interface ImagesRequest {
  model?: string;
  prompt: string;
  size?: string;
  [k: string]: unknown;
}

/**
 * The AI gateway: checks who may call and with which model, enforces the daily token budget,
 * forwards to the upstream and records every call (tokens, images, latency, status).
 */
export class AiGateway {
  constructor(
    private readonly cfg: Readonly<Config['ai']>,
    /** null when AI_BASE_URL is not set: every call is a 503. */
    private readonly upstream: AiUpstream | null,
    /** Budgets and one usage row per call. */
    private readonly meter: UsageMeter,
  ) {}

  get configured(): boolean {
    return this.upstream !== null;
  }

  /**
   * Whether AI is set up, without calling the upstream (GET /api/ai/status): the dashboard asks
   * this instead of /api/ai/models, which is a 503 on an install without AI. `provider` (the
   * upstream's host) only for admins.
   */
  status(admin: boolean): {
    configured: boolean;
    provider?: string;
    models: string[] | null;
    defaultModel: string | null;
  } {
    if (!this.configured) return { configured: false, models: null, defaultModel: null };
    const host = this.cfg.baseUrl ? new URL(String(this.cfg.baseUrl)).host : undefined;
    return {
      configured: true,
      ...(admin && host ? { provider: host } : {}),
      models: this.cfg.models ? [...this.cfg.models] : null,
      defaultModel: this.cfg.defaultModel ?? null,
    };
  }

  /** What both chat calls check and meter before asking the upstream. */
  private async beginChat(ctx: CallContext, req: ChatRequest, stream: boolean) {
    const upstream = this.admit(ctx);
    checkMessages(req.messages);
    const model = this.model(req.model);
    await this.meter.checkBudget(ctx.caller);
    const call = metered(ctx, {
      endpoint: 'chat',
      model,
      stream,
      started: performance.now(),
      promptChars: promptChars(req.messages),
    });
    return { upstream, model, call };
  }

  /** Non-streaming chat completion. */
  async chat(ctx: CallContext, req: ChatRequest): Promise<ChatCompletion> {
    const { upstream, model, call } = await this.beginChat(ctx, req, false);
    try {
      const raw = await upstream.chat({ ...req, model }, ctx.signal);
      const { completion, estimated } = shapeChat(raw, model, call.promptChars!);
      this.meter.record(call, { usage: completion.usage, estimated, status: 200 });
      return completion;
    } catch (err) {
      this.meter.recordFailure(call, err);
      throw this.safe(err);
    }
  }

  /**
   * Streaming chat completion. Upstream errors before the first byte are thrown (the route
   * answers them as JSON errors); afterwards the returned iterator yields SSE frames ready to
   * write, ending with "data: [DONE]" or, if the upstream breaks, with an error event.
   */
  async chatStream(ctx: CallContext, req: ChatRequest): Promise<AsyncGenerator<string>> {
    const { upstream, model, call } = await this.beginChat(ctx, req, true);
    // Ask for the final usage chunk when the client did not decide; it is then kept from the client.
    const clientOptions = req.stream_options;
    const injectUsage = !(
      typeof clientOptions === 'object' &&
      clientOptions !== null &&
      'include_usage' in clientOptions
    );
    const body: Json = { ...req, model, stream: true };
    if (injectUsage) body.stream_options = { ...(clientOptions as Json | undefined), include_usage: true };
    let events: AsyncIterable<string[]>;
    try {
      events = await upstream.chatStream(body, ctx.signal);
    } catch (err) {
      this.meter.recordFailure(call, err);
      throw this.safe(err);
    }
    return relayStream(events, { ctx, call, injectUsage, apiKey: this.cfg.apiKey, meter: this.meter });
  }

  /** Image generation. */
  async images(ctx: CallContext, req: ImagesRequest): Promise<ImagesAnswer> {
    const upstream = this.admit(ctx);
    const model = this.model(req.model);
    await this.meter.checkBudget(ctx.caller);
    const started = performance.now();
    const call = metered(ctx, { endpoint: 'images', model, stream: false, started });
    try {
      const raw = await upstream.images({ ...req, model }, ctx.signal);
      const { answer, usage } = shapeImages(raw);
      this.meter.record(call, { usage, estimated: false, status: 200, images: answer.data.length });
      return answer;
    } catch (err) {
      this.meter.recordFailure(call, err);
      throw this.safe(err);
    }
  }

  /** Embeddings (OpenAI format in and out); prompt tokens are metered like chat. */
  async embeddings(ctx: CallContext, req: EmbeddingsRequest): Promise<EmbeddingsAnswer> {
    const upstream = this.admit(ctx);
    const model = this.model(req.model);
    await this.meter.checkBudget(ctx.caller);
    const call = metered(ctx, { endpoint: 'embeddings', model, stream: false, started: performance.now() });
    try {
      const { answer, usage, estimated } = shapeEmbeddings(
        await upstream.embeddings({ ...req, model }, ctx.signal),
        model,
        req.input,
      );
      this.meter.record(call, { usage, estimated, status: 200 });
      return answer;
    } catch (err) {
      this.meter.recordFailure(call, err);
      throw this.safe(err);
    }
  }

  /** The models a caller may use: the allow-list when there is one, else the upstream's list. */
  async models(ctx: CallContext): Promise<ModelList> {
    const upstream = this.admit(ctx);
    if (this.cfg.models) {
      return {
        object: 'list',
        data: this.cfg.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'plinth' })),
      };
    }
    try {
      return shapeModels(await upstream.models(ctx.signal));
    } catch (err) {
      throw this.safe(err);
    }
  }

  /** A user's (or the anon callers') tokens today (UTC) against the daily budget. */
  async today(
    ctx: CallContext,
  ): Promise<{ date: string; totalTokens: number; budget: number | null; remaining: number | null }> {
    this.admit(ctx);
    return this.meter.today(ctx.caller);
  }

  /** The admin report per UTC day, model and user. */
  daily(q: UsageQuery): Promise<DailyUsage[]> {
    return this.meter.store.daily(q);
  }

  /** The admin report (waits for this instance's usage writes still in flight). */
  report(q: UsageQuery): Promise<UsageLine[]> {
    return this.meter.store.summary(q);
  }

  /** Health check: the upstream answers GET /models within 3 s. */
  async ping(): Promise<void> {
    if (!this.upstream) throw new Error('AI is not configured');
    await this.upstream.ping(AbortSignal.timeout(3000)).catch((err: unknown) => {
      throw this.safe(err);
    });
  }

  /** Waits for usage writes still in flight (shutdown). */
  flush(): Promise<void> {
    return this.meter.store.flush();
  }

  /** Writes what is buffered and closes idle upstream connections (shutdown). */
  async close(): Promise<void> {
    await this.meter.store.flush();
    this.upstream?.close();
  }

  /**
   * Every error leaves the gateway (to an answer or a log line) through here: whatever the
   * upstream sent, in any message, stack or cause, is redacted.
   */
  private safe(err: unknown): Error {
    return err instanceof ClientGoneError ? err : redactError(err, this.cfg.apiKey);
  }

  // Who may call comes first: the anon key is refused the same way whether AI is set up or not.
  private admit(ctx: CallContext): AiUpstream {
    if (ctx.caller.kind === 'anon' && !this.cfg.allowAnon) {
      throw new AppError('FORBIDDEN', {
        message: 'The AI endpoints need a signed-in user; the anon key is not enough on this server.',
        nextActions:
          'Sign in and send the access token as "Authorization: Bearer <token>" (the operator can allow anon callers with AI_ALLOW_ANON=true).',
      });
    }
    if (!this.upstream) throw new AppError('AI_NOT_CONFIGURED');
    return this.upstream;
  }

  /** The requested model, else the default; checked against the allow-list when there is one. */
  private model(requested: string | undefined): string {
    const allowed = this.cfg.models;
    const model = requested ?? this.cfg.defaultModel ?? allowed?.[0];
    if (!model) {
      throw new AppError('INVALID_INPUT', {
        message: 'model is required: this server has no default model.',
        nextActions: 'Send "model" with the request, e.g. "gpt-4o-mini"; the operator can set AI_DEFAULT_MODEL.',
      });
    }
    if (allowed && !allowed.includes(model)) {
      throw new AppError('MODEL_NOT_ALLOWED', {
        message: `The model "${model.slice(0, 100)}" is not allowed on this server.`,
        nextActions: `Use one of: ${allowed.join(', ')}.`,
      });
    }
    return model;
  }
}

/** The accounting view of a call: who makes it, plus what the meter needs. */
function metered(ctx: CallContext, call: Omit<MeteredCall, 'caller' | 'logError'>): MeteredCall {
  return { ...call, caller: ctx.caller, logError: ctx.logError };
}

/** Role rules a JSON schema cannot say simply: who needs content, what a tool message needs. */
export function checkMessages(messages: readonly ChatMessage[]): void {
  messages.forEach((m, i) => {
    const hasContent = typeof m.content === 'string' || Array.isArray(m.content);
    if (m.role === 'assistant') {
      if (!hasContent && !Array.isArray(m.tool_calls) && m.function_call === undefined) {
        throw bad(`messages[${i}] (assistant) needs content or tool_calls.`);
      }
      return;
    }
    if (!hasContent) throw bad(`messages[${i}] (${m.role}) needs content: a string or an array of content parts.`);
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') throw bad(`messages[${i}] (tool) needs tool_call_id.`);
  });
}

function bad(message: string): AppError {
  return new AppError('INVALID_INPUT', {
    message,
    nextActions:
      'Send messages as [{"role": "user", "content": "Hello"}]; roles are system, developer, user, assistant and tool.',
  });
}
