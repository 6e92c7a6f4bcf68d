import type { Readable } from 'node:stream';
import { Pool } from 'undici';

/** An answer of the upstream: status and headers now, the body as it arrives. */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  header(name: string): string | null;
  /** The body as it arrives; errors if the connection breaks or the request is aborted. */
  body: Readable;
  /** The whole body as UTF-8 text; refuses more than `maxBytes`. */
  text(maxBytes?: number): Promise<string>;
}

/** The answer was larger than the client accepts. */
export class AnswerTooLargeError extends Error {
  constructor(limit: number) {
    super(`answer larger than ${limit} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * A small keep-alive HTTP(S) client bound to one base URL, on undici's Pool (the client the
 * function relay uses too) rather than global fetch, which cost about five times the CPU per
 * call here (docs/ai.md). Redirects are never followed (the API key must not travel elsewhere)
 * and no compression is asked for.
 */
export class HttpClient {
  private readonly base: URL;
  private readonly pool: Pool;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    this.pool = new Pool(this.base.origin, { connections: 512 });
  }

  /** `path` is relative to the base URL ("chat/completions"). Resolves when the headers arrive. */
  async request(req: {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: string;
    signal: AbortSignal;
  }): Promise<HttpAnswer> {
    const url = new URL(req.path, this.base);
    const res = await this.pool.request({
      method: req.method,
      path: url.pathname + url.search,
      headers: { ...req.headers, 'accept-encoding': 'identity' },
      body: req.body ?? null,
      signal: req.signal,
      // The caller's deadline covers the wait and the stream; undici's own timers are off.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const status = res.statusCode;
    return {
      status,
      ok: status >= 200 && status < 300,
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
      body: res.body,
      text: (maxBytes = MAX_ANSWER_BYTES) => readText(res.body, maxBytes),
    };
  }

  /** Closes the keep-alive connections (shutdown). */
  close(): void {
    void this.pool.destroy().catch(() => {});
  }
}

async function readText(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
