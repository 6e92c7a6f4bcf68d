import { AppError } from '../errors/index.js';
import type { Readable } from 'node:stream';
import { SseEventTooLargeError, SseParser } from './sse.js';
import { AnswerTooLargeError, HttpClient, type HttpAnswer } from './http.js';
import { redact } from './redact.js';
import { Deadline } from './deadline.js';

export { ClientGoneError } from './deadline.js';

/** A JSON object as sent to or received from the upstream. */
export type Json = Record<string, unknown>;

/**
 * The AI upstream: any server speaking the OpenAI HTTP API. Every method takes the caller's
 * signal (aborted when the client goes away) and throws AppErrors already mapped to Plinth's
 * codes, or ClientGoneError when the caller's signal ended the call.
 */
export interface AiUpstream {
  /** POST /chat/completions without streaming: the parsed JSON answer. */
  chat(body: Json, signal: AbortSignal): Promise<unknown>;
  /**
   * POST /chat/completions with stream: true: the data payloads of the SSE events in order
   * ("[DONE]" included), in batches of the events that arrived together.
   */
  chatStream(body: Json, signal: AbortSignal): Promise<AsyncIterable<string[]>>;
  /** POST /images/generations, POST /embeddings: the parsed JSON answer. */
  images(body: Json, signal: AbortSignal): Promise<unknown>;
  embeddings(body: Json, signal: AbortSignal): Promise<unknown>;
  /** GET /models: the parsed JSON answer. */
  models(signal: AbortSignal): Promise<unknown>;
  /** GET /models: resolves when the upstream answers with a 2xx (health check). */
  ping(signal: AbortSignal): Promise<void>;
  /** Closes idle connections. */
  close(): void;
}

export interface UpstreamOptions {
  /** e.g. https://api.openai.com/v1 (no trailing slash) */
  baseUrl: string;
  apiKey: string | null;
  /** Time allowed for a whole answer, and between two chunks of a stream. */
  timeoutMs: number;
}

const MAX_MESSAGE = 500;

/** The upstream over a keep-alive HTTP client. The API key goes only to `baseUrl`: redirects are not followed. */
export class OpenAiUpstream implements AiUpstream {
  private readonly http: HttpClient;

  constructor(private readonly opts: UpstreamOptions) {
    this.http = new HttpClient(opts.baseUrl);
  }
  close(): void {
    this.http.close();
  }

  async chat(body: Json, signal: AbortSignal): Promise<unknown> {
    return this.json('chat/completions', body, signal);
  }

  async images(body: Json, signal: AbortSignal): Promise<unknown> {
    return this.json('images/generations', body, signal);
  }

  embeddings(body: Json, signal: AbortSignal): Promise<unknown> {
    return this.json('embeddings', body, signal);
  } // prettier-ignore

  async models(signal: AbortSignal): Promise<unknown> {
    return this.json('models', null, signal);
  }

  async ping(signal: AbortSignal): Promise<void> {
    const deadline = new Deadline(this.opts.timeoutMs, signal);
    try {
      const res = await this.http.request({
        method: 'GET',
        path: 'models',
        headers: this.headers(),
        signal: deadline.signal,
      });
      await res.text(1024 * 1024).catch(() => undefined);
      if (!res.ok) throw new Error(`GET /models answered ${res.status}`);
    } finally {
      deadline.finish();
    }
  }

  async chatStream(body: Json, signal: AbortSignal): Promise<AsyncIterable<string[]>> {
    const deadline = new Deadline(this.opts.timeoutMs, signal);
    let res: HttpAnswer;
    try {
      res = await this.post('chat/completions', body, deadline);
      if (!res.ok) throw this.httpError(res, await this.text(res, deadline));
      const type = res.header('content-type') ?? '';
      if (!type.includes('text/event-stream')) {
        throw new AppError('AI_UPSTREAM_ERROR', {
          message: 'The AI provider did not answer with an event stream.',
          cause: new Error(`content-type ${type || '(none)'}`),
        });
      }
    } catch (err) {
      deadline.cancel();
      throw deadline.translate(err, 'connect');
    }
    return events(res.body, deadline);
  }

  /** POST `body` (GET when null) and parse the JSON answer. */
  private async json(path: string, body: Json | null, signal: AbortSignal): Promise<unknown> {
    const deadline = new Deadline(this.opts.timeoutMs, signal);
    try {
      const res = body
        ? await this.post(path, body, deadline)
        : await this.http.request({ method: 'GET', path, headers: this.headers(), signal: deadline.signal });
      const text = await this.text(res, deadline);
      if (!res.ok) throw this.httpError(res, text);
      try {
        return JSON.parse(text);
      } catch {
        // Not JSON.parse's own error: it quotes the body, and a quote cut short could hold part of the key.
        throw new AppError('AI_UPSTREAM_ERROR', {
          message: 'The AI provider sent an answer that is not valid JSON.',
          cause: new Error(`AI upstream answer is not JSON: ${redact(text, this.opts.apiKey, 200)}`),
        });
      }
    } catch (err) {
      deadline.cancel();
      throw deadline.translate(err, 'connect');
    } finally {
      deadline.finish();
    }
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (this.opts.apiKey) h.authorization = `Bearer ${this.opts.apiKey}`;
    return h;
  }

  private post(path: string, body: Json, deadline: Deadline): Promise<HttpAnswer> {
    return this.http.request({
      method: 'POST',
      path,
      headers: { ...this.headers(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: deadline.signal,
    });
  }

  private async text(res: HttpAnswer, deadline: Deadline): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      if (err instanceof AnswerTooLargeError) {
        throw new AppError('AI_UPSTREAM_ERROR', {
          message: 'The AI provider sent an answer that is too large.',
          cause: err,
        });
      }
      throw deadline.translate(err, 'read');
    }
  }

  /** Maps an upstream HTTP error: its own message for the caller's mistakes, none otherwise. */
  private httpError(res: HttpAnswer, text: string): AppError {
    const status = res.status;
    const upstreamMessage = errorMessage(text, this.opts.apiKey);
    const cause = new Error(`AI upstream answered ${status}: ${redact(text, this.opts.apiKey, 1000)}`);
    if (status === 401 || status === 403) {
      return new AppError('AI_UPSTREAM_ERROR', {
        message: `The AI provider refused the server's credentials (status ${status}).`,
        nextActions: 'The operator should check AI_API_KEY (and that the key may use this model).',
        cause,
      });
    }
    if (status === 408) return new AppError('AI_UPSTREAM_TIMEOUT', { cause });
    if (status === 429) {
      const retry = retryAfter(res.header('retry-after'), Date.now());
      return new AppError('AI_UPSTREAM_RATE_LIMITED', {
        message: upstreamMessage ? `The AI provider is limiting requests: ${upstreamMessage}` : undefined,
        headers: retry ? { 'retry-after': retry } : {},
        cause,
      });
    }
    if (status >= 400 && status < 500) {
      return new AppError('AI_UPSTREAM_REJECTED', {
        message: upstreamMessage
          ? `The AI provider rejected the request: ${upstreamMessage}`
          : `The AI provider rejected the request (status ${status}).`,
        cause,
      });
    }
    return new AppError('AI_UPSTREAM_ERROR', { message: `The AI provider failed (status ${status}).`, cause });
  }
}

/** The longest wait passed on from an upstream's Retry-After date: a day, the longest window providers limit over. */
const MAX_RETRY_DATE_S = 86_400;
const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The upstream's Retry-After as Plinth passes it on: delay-seconds as sent, an HTTP date
 * (IMF-fixdate) as the seconds from `now` until then (at least 1, at most a day), anything
 * else dropped.
 */
export function retryAfter(value: string | null, now: number): string | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d{1,6}$/.test(v)) return v;
  if (!HTTP_DATE.test(v)) return null;
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return null;
  return String(Math.min(MAX_RETRY_DATE_S, Math.max(1, Math.ceil((at - now) / 1000))));
}

/**
 * The message of an OpenAI-style error body ({error: {message}}, {error: "..."}, {message}),
 * one printable line, redacted (`apiKey` and key-shaped text) and bounded.
 */
export function errorMessage(text: string, apiKey: string | null = null): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return '';
  }
  const obj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
  let msg: unknown;
  if (obj(body)) {
    if (obj(body.error)) msg = body.error.message;
    else if (typeof body.error === 'string') msg = body.error;
    else msg = body.message ?? body.detail;
  }
  if (typeof msg !== 'string') return '';
  return redact(msg.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim(), apiKey, MAX_MESSAGE);
}

/** Time to let the upstream finish its body after [DONE], so the connection can be reused. */
const DRAIN_MS = 1000;

/**
 * The SSE data payloads of an upstream stream, batched as they arrived. The clock runs only while waiting for the
 * upstream (a slow reader downstream is not an upstream timeout) and restarts with each chunk.
 */
async function* events(body: Readable, deadline: Deadline): AsyncGenerator<string[]> {
  const parser = new SseParser();
  let complete = false;
  let sawDone = false;
  try {
    try {
      for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        const batch = parser.push(chunk);
        if (batch.length) {
          if (batch.includes('[DONE]')) sawDone = true;
          deadline.pause();
          yield batch;
        }
        deadline.restart();
      }
      complete = true;
      const last = parser.end();
      if (last.length) yield last;
    } catch (err) {
      if (err instanceof SseEventTooLargeError) {
        throw new AppError('AI_UPSTREAM_ERROR', {
          message: 'The AI provider sent an oversized stream event.',
          cause: err,
        });
      }
      throw deadline.translate(err, 'read');
    }
  } finally {
    // Also runs when the consumer stops early. After [DONE] the rest of the body (usually
    // just its end) is read in the background so the connection stays in the pool;
    // otherwise the upstream call ends here.
    if (complete) deadline.finish();
    else if (sawDone) drain(body, deadline);
    else deadline.cancel();
  }
}

function drain(body: Readable, deadline: Deadline): void {
  if (body.readableEnded) return deadline.finish();
  const timer = setTimeout(() => deadline.cancel(), DRAIN_MS);
  body.on('error', () => clearTimeout(timer));
  body.once('end', () => {
    clearTimeout(timer);
    deadline.finish();
  });
  body.resume();
}
