// A local server speaking the OpenAI HTTP API (JSON and Server-Sent Events): the one mock
// allowed in Plinth's tests, since a paid upstream cannot be reached here. The behaviour is
// chosen by the model name, so tests are explicit and can run side by side:
//
//   any other name       a normal answer (JSON, or a stream when stream: true)
//   mock-slow            chunks 30 ms apart (JSON answer after 100 ms)
//   mock-gated           first chunk, then waits for release() before the rest
//   mock-hang            never answers (headers never come)
//   mock-hang-mid        first chunk, then nothing, forever
//   mock-broken          connection destroyed (JSON) / after two chunks (stream)
//   mock-malformed       body that is not JSON / a chunk that is not JSON
//   mock-shape           valid JSON of the wrong shape
//   mock-nodone          stream ends without [DONE] and without finish_reason
//   mock-late-end        the body ends 30 ms after [DONE]
//   mock-redirect        307 to `redirectTo` (an upstream must never be followed elsewhere)
//   mock-nousage         no usage in the answer or the stream (embeddings too)
//   mock-huge-usage      usage far beyond any model's context (HUGE_USAGE)
//   mock-error-event     stream with an {"error": ...} event after the first chunk
//   mock-json-for-stream answers a stream request with plain JSON
//   mock-tools           an assistant message with tool_calls and content null
//   mock-url             image items with url instead of b64_json
//   mock-400|401|404|429|500|503   that status with an OpenAI error body
//   mock-429-date|mock-429-junk    429 whose Retry-After is an HTTP date / not a valid value
//   mock-echo-key        echoes the API key it received (as a careless provider or proxy
//                        might): in a 500 error body / in an error event after the first chunk
//   mock-echo-key-400    echoes it in a 400 error message
//   mock-echo-key-html   echoes it in a 200 body that is not JSON / a chunk that is not JSON
//
// Run standalone (for bench/ai.ts): node --import tsx test/helpers/openai-mock.ts <port>
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

export const MOCK_USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
export const HUGE_USAGE = { prompt_tokens: 1e15, completion_tokens: 7, total_tokens: 1e15 + 7 };
export const STREAM_PARTS = ['Hel', 'lo', ' world'];
/** A 1×1 transparent PNG. */
export const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const ERRORS: Record<number, { message: string; type: string; code: string | null }> = {
  400: {
    message: "Invalid value for 'temperature': must be between 0 and 2.",
    type: 'invalid_request_error',
    code: null,
  },
  401: {
    message:
      'Incorrect API key provided: sk-abc12********************xyz9. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  },
  404: {
    message: 'The model `gpt-nope` does not exist or you do not have access to it.',
    type: 'invalid_request_error',
    code: 'model_not_found',
  },
  429: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' },
  500: {
    message: 'The server had an error while processing your request. internal-detail-xyz',
    type: 'server_error',
    code: null,
  },
  503: { message: 'The engine is currently overloaded.', type: 'server_error', code: null },
};

export class OpenAiMock {
  readonly requests: ReceivedRequest[] = [];
  /** How many requests ended because the other side closed the connection before the answer was complete. */
  aborted = 0;
  /** TCP connections accepted so far (keep-alive reuse shows as a count that does not grow). */
  connections = 0;
  private readonly server: http.Server;
  private gate: { promise: Promise<void>; release: () => void } = OpenAiMock.newGate();
  private abortWaiters: Array<() => void> = [];
  url = '';
  /** Where mock-redirect points. */
  redirectTo = 'http://127.0.0.1:9/v1/chat/completions';

  constructor(private readonly apiKey: string | null = null) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', () => this.connections++);
  }

  private static newGate() {
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    return { promise, release };
  }

  /** Base URL to use as AI_BASE_URL, e.g. http://127.0.0.1:1234/v1 */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  async start(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.gate.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Lets mock-gated streams go on past their first chunk. */
  release(): void {
    this.gate.release();
    this.gate = OpenAiMock.newGate();
  }

  /** Resolves once `n` requests in total have been aborted by the client side. */
  waitForAborts(n: number): Promise<void> {
    if (this.aborted >= n) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.aborted >= n) resolve();
        else this.abortWaiters.push(check);
      };
      this.abortWaiters.push(check);
    });
  }

  /** The last request received on `path` (e.g. /v1/chat/completions). */
  last(path = '/v1/chat/completions'): ReceivedRequest | undefined {
    return [...this.requests].reverse().find((r) => r.url === path);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = null;
    }
    this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.on('close', () => {
      if (!res.writableFinished) {
        this.aborted++;
        const waiters = this.abortWaiters;
        this.abortWaiters = [];
        for (const w of waiters) w();
      }
    });

    if (this.apiKey && req.headers.authorization !== `Bearer ${this.apiKey}`) return this.error(res, 401);
    if (req.method === 'GET' && req.url === '/v1/models') {
      return this.json(res, 200, {
        object: 'list',
        data: [{ id: 'mock', object: 'model', created: 1700000000, owned_by: 'mock' }],
      });
    }
    if (req.method !== 'POST' || !body) return this.error(res, 400);
    const model = String(body.model ?? '');
    const status = /^mock-(\d{3})$/.exec(model);
    if (status) return this.error(res, Number(status[1]));
    if (model === 'mock-429-date') return this.error(res, 429, 'Wed, 21 Oct 2099 07:28:00 GMT');
    if (model === 'mock-429-junk') return this.error(res, 429, 'soon');
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (model === 'mock-echo-key-400')
      return this.json(res, 400, { error: { message: `Bad request for key ${key}`, type: 'invalid_request_error' } });
    if (model === 'mock-echo-key' && body.stream !== true)
      return this.json(res, 500, { error: { message: `overloaded ${key}`, type: 'server_error' } });
    if (model === 'mock-echo-key-html' && body.stream !== true) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`<b>${key}</b>`);
    }
    if (model === 'mock-hang') return; // never answers
    if (model === 'mock-redirect') {
      res.writeHead(307, { location: this.redirectTo });
      return void res.end();
    }
    if (model === 'mock-broken' && body.stream !== true) return void req.socket.destroy();
    if (model === 'mock-malformed' && body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"id": "chatcmpl-1", "choices": [');
    }
    if (model === 'mock-shape') return this.json(res, 200, { result: 'not an OpenAI answer' });
    if (req.url === '/v1/chat/completions') {
      if (body.stream === true && model !== 'mock-json-for-stream') return this.stream(req, res, body, model);
      if (model === 'mock-slow') await sleep(100);
      return this.json(res, 200, this.completion(body, model));
    }
    if (req.url === '/v1/images/generations') {
      const n = typeof body.n === 'number' ? body.n : 1;
      const item =
        model === 'mock-url'
          ? { url: 'https://example.com/image.png' }
          : { b64_json: PNG_B64, revised_prompt: String(body.prompt) };
      return this.json(res, 200, { created: 1700000000, data: Array.from({ length: n }, () => item) });
    }
    if (req.url === '/v1/embeddings') return this.json(res, 200, mockEmbeddings(body, model));
    return this.error(res, 404);
  }

  private completion(body: Record<string, unknown>, model: string): Record<string, unknown> {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const lastUser = [...messages].reverse().find((m) => m?.role === 'user');
    const message =
      model === 'mock-tools'
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          }
        : {
            role: 'assistant',
            content: `echo: ${typeof lastUser?.content === 'string' ? lastUser.content : ''}`,
            refusal: null,
          };
    return {
      id: 'chatcmpl-mock123',
      object: 'chat.completion',
      created: 1700000000,
      model,
      system_fingerprint: 'fp_mock',
      choices: [{ index: 0, message, logprobs: null, finish_reason: model === 'mock-tools' ? 'tool_calls' : 'stop' }],
      ...(model === 'mock-nousage' ? {} : { usage: model === 'mock-huge-usage' ? HUGE_USAGE : MOCK_USAGE }),
    };
  }

  private async stream(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Record<string, unknown>,
    model: string,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) => ({
      id: 'chatcmpl-mockstream',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    });
    const send = (data: unknown) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    send(chunk({ role: 'assistant', content: '' }, null));
    send(chunk({ content: STREAM_PARTS[0] }, null));
    if (model === 'mock-gated') await this.gate.promise;
    if (model === 'mock-hang-mid') return; // nothing more, ever
    if (model === 'mock-error-event') {
      send({ error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
      return void res.end();
    }
    if (model === 'mock-echo-key' || model === 'mock-echo-key-html') {
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      send(
        model === 'mock-echo-key' ? { error: { message: `overloaded ${key}`, type: 'server_error' } } : `<b>${key}</b>`,
      );
      return void res.end();
    }
    if (model === 'mock-malformed') {
      send('{"id": "chatcmpl-mockstream", "choices": [{"delta": ');
      return void res.end();
    }
    if (model === 'mock-broken') {
      await sleep(10);
      return void req.socket.destroy();
    }
    for (const part of STREAM_PARTS.slice(1)) {
      if (model === 'mock-slow') await sleep(30);
      send(chunk({ content: part }, null));
    }
    if (model === 'mock-nodone') return void res.end();
    send(chunk({}, 'stop'));
    if (includeUsage && model !== 'mock-nousage')
      send({ ...chunk({}, null), choices: [], usage: model === 'mock-huge-usage' ? HUGE_USAGE : MOCK_USAGE });
    send('[DONE]');
    if (model === 'mock-late-end') await sleep(30);
    res.end();
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private error(res: http.ServerResponse, status: number, retryAfter = '7'): void {
    const e = ERRORS[status] ?? { message: `error ${status}`, type: 'server_error', code: null };
    res.setHeader('x-request-id', 'req_mock');
    if (status === 429) res.setHeader('retry-after', retryAfter);
    this.json(res, status, { error: { ...e, param: null } });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The embedding of input number `i`: `dimensions` floats (default 3), [i + 1, 0.5, 0.25, ...]
 * so a test can tell the items apart; base64 when asked (little-endian float32, as OpenAI).
 */
export function mockVector(i: number, dimensions = 3): number[] {
  return Array.from({ length: dimensions }, (_, d) => (d === 0 ? i + 1 : 1 / 2 ** d));
}

function mockEmbeddings(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const dims = typeof body.dimensions === 'number' ? body.dimensions : 3;
  const data = inputs.map((_, i) => {
    const v = mockVector(i, dims);
    const embedding =
      body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
    return { object: 'embedding', index: i, embedding };
  });
  const tokens = inputs.reduce<number>((n, x) => n + Math.ceil(String(x).length / 4), 0);
  return {
    object: 'list',
    data,
    model,
    ...(model === 'mock-nousage' ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await new OpenAiMock().start(Number(process.argv[2] ?? 0));
  // Keep no request log when serving a benchmark: memory would grow without bound.
  mock.requests.push = () => 0;
  process.stdout.write(`${mock.url}\n`);
  const stop = () => void mock.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
