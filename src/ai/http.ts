import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

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
 * A small keep-alive HTTP(S) client bound to one base URL. Measured on this machine it costs
 * about 0.06 ms of CPU a call against 0.31 ms for global fetch, which is most of the gateway's
 * own overhead. Redirects are never followed (the API key must not travel elsewhere) and no
 * compression is asked for.
 */
export class HttpClient {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    const secure = this.base.protocol === 'https:';
    this.transport = secure ? https : http;
    const opts = { keepAlive: true, maxSockets: 512, maxFreeSockets: 64, timeout: 120_000 };
    this.agent = secure ? new https.Agent(opts) : new http.Agent(opts);
  }

  /** `path` is relative to the base URL ("chat/completions"). Resolves when the headers arrive. */
  request(o: { method: string; path: string; headers: Record<string, string>; body?: string; signal: AbortSignal }): Promise<HttpAnswer> {
    const url = new URL(o.path, this.base);
    const body = o.body === undefined ? undefined : Buffer.from(o.body, 'utf8');
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        url,
        {
          method: o.method,
          agent: this.agent,
          signal: o.signal,
          headers: { ...o.headers, 'accept-encoding': 'identity', ...(body ? { 'content-length': String(body.length) } : {}) },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          resolve({
            status,
            ok: status >= 200 && status < 300,
            header: (name) => {
              const v = res.headers[name.toLowerCase()];
              return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
            },
            body: res,
            text: (maxBytes = MAX_ANSWER_BYTES) => readText(res, maxBytes),
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes idle keep-alive connections (shutdown). */
  close(): void {
    this.agent.destroy();
  }
}

async function readText(res: http.IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      res.destroy();
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
