import http from 'node:http';
import { AppError } from '../../errors/index.js';
import { safeEqual } from '../../lib/crypto.js';
import { dropHopByHop } from './transport.js';
import type { FunctionRuntime } from './types.js';

interface Deployed {
  version: string;
  code: string;
  secrets: Record<string, string>;
  adopts?: string;
}

// How each failure is told to Plinth (see faults.ts, which maps them back to codes).
const OUTCOME: Partial<Record<string, { status: number; outcome: string }>> = {
  FUNCTION_ERROR: { status: 500, outcome: 'threw' },
  FUNCTION_TIMEOUT: { status: 504, outcome: 'timeout' },
  FUNCTION_MEMORY_LIMIT: { status: 500, outcome: 'memory' },
};

const ROUTE = /^\/fn\/([A-Za-z0-9-]{1,64})\/_plinth\/(deploy|invoke)$/;
const MAX_DEPLOY_BYTES = 4 * 1024 * 1024;

/**
 * A standalone function runtime for FUNCTION_RUNTIME_URL: the host protocol under
 * /fn/{functionId}/_plinth/{deploy,invoke}, served from a local pool of Deno processes.
 * Several API instances can share it. With a token, every request must carry it in
 * x-plinth-runtime-token.
 */
export function createRuntimeServer(runtime: FunctionRuntime, token: string | null): http.Server {
  const server = new RuntimeServer(runtime, token);
  return http.createServer((req, res) => server.handle(req, res));
}

class RuntimeServer {
  /** The version each function was last deployed with, and how to load it again. */
  private readonly deployed = new Map<string, Deployed>();

  constructor(
    private readonly runtime: FunctionRuntime,
    private readonly token: string | null,
  ) {}

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const given = req.headers['x-plinth-runtime-token'];
      if (this.token && (typeof given !== 'string' || !safeEqual(given, this.token))) return answer(res, 401);
      const path = (req.url ?? '/').split('?')[0]!;
      if (path === '/_plinth/health') {
        await this.runtime.check();
        return answer(res, 200);
      }
      const m = ROUTE.exec(path);
      if (!m) return answer(res, 404);
      if (m[2] === 'deploy') return await this.deploy(m[1]!, req, res);
      return await this.invoke(m[1]!, req, res);
    } catch (err) {
      fail(res, err);
    }
  }

  /**
   * PUT /fn/{id}/_plinth/deploy: the version is loaded before the answer, so a refused module
   * is reported to the save that sent it; until then the version deployed before keeps serving.
   */
  private async deploy(id: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'PUT') return answer(res, 405);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_DEPLOY_BYTES) return answer(res, 413);
      chunks.push(c as Buffer);
    }
    const d = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Deployed;
    if (typeof d.version !== 'string' || typeof d.code !== 'string' || typeof d.secrets !== 'object')
      return answer(res, 400);
    if (d.adopts !== undefined && typeof d.adopts !== 'string') return answer(res, 400);
    try {
      await this.runtime.load({
        id,
        version: d.version,
        adopts: d.adopts,
        load: async () => ({ code: d.code, secrets: d.secrets }),
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_FUNCTION_CODE')
        return answer(res, 422, {}, { kind: 'export', message: err.message });
      throw err;
    }
    this.deployed.set(id, { version: d.version, code: d.code, secrets: d.secrets });
    answer(res, 200);
  }

  /** /fn/{id}/_plinth/invoke: one call of the version deployed, relayed both ways. */
  private async invoke(id: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const d = this.deployed.get(id);
    const version = req.headers['x-plinth-runtime-version'];
    if (!d || d.version !== version) return answer(res, 409, { 'x-plinth-runtime-outcome': 'not-deployed' });
    const headers = dropHopByHop(req.headers);
    for (const k of Object.keys(headers)) if (k.startsWith('x-plinth-runtime-')) delete headers[k];
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    const out = await this.runtime.invoke(
      { id, version: d.version, load: async () => ({ code: d.code, secrets: d.secrets }) },
      {
        method: req.method ?? 'GET',
        url: String(req.headers['x-plinth-runtime-url'] ?? ''),
        headers,
        body: hasBody ? req : null,
      },
    );
    // Status and headers leave with the first bytes of the body, so a body that fails before
    // any is answered with its outcome instead.
    res.statusCode = out.status;
    for (const [k, v] of Object.entries(out.headers)) res.setHeader(k, v);
    if (Buffer.isBuffer(out.body)) return void res.end(out.body);
    out.body.on('error', (err) => fail(res, err));
    out.body.pipe(res);
  }
}

function answer(
  res: http.ServerResponse,
  status: number,
  headers: Record<string, string> = {},
  body: Record<string, unknown> = {},
): void {
  // Headers of a function's response that failed before it started are not sent.
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ status, ...body }));
}

/** A failure told as the protocol's outcome (see faults.ts), or a cut when the answer has started. */
function fail(res: http.ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.destroy();
  const mapped = err instanceof AppError ? OUTCOME[err.code] : undefined;
  if (mapped) return answer(res, mapped.status, { 'x-plinth-runtime-outcome': mapped.outcome });
  if (err instanceof SyntaxError) return answer(res, 400);
  answer(res, 502, { 'x-plinth-runtime-outcome': 'unavailable' });
}
