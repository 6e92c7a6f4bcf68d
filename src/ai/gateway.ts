import type { Config } from '../config/index.js';
import { AppError } from '../errors/index.js';
import { ClientGoneError, type AiUpstream, type Json } from './upstream.js';
import { redact, redactError } from './redact.js';
import {
  estimateUsage,
  promptChars,
  readChunk,
  shapeChat,
  shapeImages,
  shapeModels,
  type ChatCompletion,
  type ImagesAnswer,
  type ModelList,
  type Usage,
} from './shape.js';
import type { DailyUsage, UsageLine, UsageQuery } from './usage-store.js';
import { shapeEmbeddings, type EmbeddingsAnswer, type EmbeddingsRequest } from './embeddings.js';
import { CLIENT_CLOSED, type Caller, type MeteredCall, type UsageMeter } from './usage.js';

/** Who calls and how the call ends early: the caller's identity, its disconnect signal, its log. */
export interface CallContext {
  caller: Caller;
  /** Aborted when the client goes away: the upstream call stops with it. */
  signal: AbortSignal;
  /** Where background failures (a usage row that could not be written) are reported. */
  logError: (err: unknown, msg: string) => void;
}

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

const sseData = (data: string) => `data: ${data}\n\n`;

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

  /** Non-streaming chat completion. */
  async chat(ctx: CallContext, req: ChatRequest): Promise<ChatCompletion> {
    const upstream = this.admit(ctx);
    checkMessages(req.messages);
    const model = this.model(req.model);
    await this.meter.checkBudget(ctx.caller);
    const started = performance.now();
    const call = metered(ctx, { endpoint: 'chat', model, stream: false, started, promptChars: promptChars(req.messages) });
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
    const upstream = this.admit(ctx);
    checkMessages(req.messages);
    const model = this.model(req.model);
    await this.meter.checkBudget(ctx.caller);
    const started = performance.now();
    const call = metered(ctx, { endpoint: 'chat', model, stream: true, started, promptChars: promptChars(req.messages) });
    // Ask for the final usage chunk when the client did not decide; it is then kept from the client.
    const clientOptions = req.stream_options;
    const injectUsage = !(typeof clientOptions === 'object' && clientOptions !== null && 'include_usage' in clientOptions);
    const body: Json = { ...req, model, stream: true };
    if (injectUsage) body.stream_options = { ...(clientOptions as Json | undefined), include_usage: true };
    let events: AsyncIterable<string[]>;
    try {
      events = await upstream.chatStream(body, ctx.signal);
    } catch (err) {
      this.meter.recordFailure(call, err);
      throw this.safe(err);
    }
    return this.relay(events, { ctx, call, injectUsage });
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
      const { answer, usage, estimated } = shapeEmbeddings(await upstream.embeddings({ ...req, model }, ctx.signal), model, req.input);
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
      return { object: 'list', data: this.cfg.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'plinth' })) };
    }
    try {
      return shapeModels(await upstream.models(ctx.signal));
    } catch (err) {
      throw this.safe(err);
    }
  }

  /** A user's (or the anon callers') tokens today (UTC) against the daily budget. */
  async today(ctx: CallContext): Promise<{ date: string; totalTokens: number; budget: number | null; remaining: number | null }> {
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
        nextActions: 'Sign in and send the access token as "Authorization: Bearer <token>" (the operator can allow anon callers with AI_ALLOW_ANON=true).',
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

  private async *relay(
    events: AsyncIterable<string[]>,
    s: { ctx: CallContext; call: MeteredCall; injectUsage: boolean },
  ): AsyncGenerator<string> {
    let usage: Usage | null = null;
    let chars = 0;
    let finished = false;
    let done = false;
    let status = 200;
    let error: string | null = null;
    try {
      // Events that arrived together are written together: one write, not one per event.
      for await (const batch of events) {
        let out = '';
        try {
          for (const data of batch) {
            if (data === '[DONE]') {
              done = true;
              break;
            }
            let facts;
            try {
              facts = readChunk(JSON.parse(data));
            } catch (err) {
              // Not JSON.parse's own error: it quotes the chunk, and a quote cut short could hold part of the key.
              throw err instanceof AppError
                ? err
                : new AppError('AI_UPSTREAM_ERROR', {
                    message: 'The AI provider sent a malformed stream chunk.',
                    cause: new Error(`AI upstream stream chunk is not JSON: ${redact(data, this.cfg.apiKey, 200)}`),
                  });
            }
            if (facts.error !== null) {
              throw new AppError('AI_UPSTREAM_ERROR', {
                message: 'The AI provider reported an error in the middle of the answer.',
                cause: new Error(`AI upstream error event: ${redact(facts.error, this.cfg.apiKey)}`),
              });
            }
            chars += facts.chars;
            finished ||= facts.finished;
            if (facts.usage) usage = facts.usage;
            if (facts.usageOnly && s.injectUsage) continue;
            out += sseData(data);
          }
        } finally {
          // The good events before a bad one still reach the client, then the error event.
          if (out) yield out;
        }
        if (done) break;
      }
      if (!done && !finished) {
        throw new AppError('AI_UPSTREAM_ERROR', { message: 'The AI provider ended the stream before the answer was complete.' });
      }
      yield sseData('[DONE]');
    } catch (err) {
      if (err instanceof ClientGoneError || s.ctx.signal.aborted) {
        status = CLIENT_CLOSED;
        return;
      }
      const e = redactError(err instanceof AppError ? err : new AppError('AI_UPSTREAM_ERROR', { cause: err }), this.cfg.apiKey);
      status = e.status;
      error = e.code;
      if (e.status >= 500) s.ctx.logError(e.cause ?? e, `AI stream failed: ${e.message}`);
      // The status line is long gone: the error travels as an event, as OpenAI sends them.
      yield sseData(JSON.stringify({ error: { message: e.message, type: 'upstream_error', code: e.code } }));
    } finally {
      if (s.ctx.signal.aborted && status === 200) status = CLIENT_CLOSED;
      const estimated = usage === null;
      this.meter.record(s.call, { usage: usage ?? estimateUsage(s.call.promptChars!, chars), estimated, status, error });
    }
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
    nextActions: 'Send messages as [{"role": "user", "content": "Hello"}]; roles are system, developer, user, assistant and tool.',
  });
}
