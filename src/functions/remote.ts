import http from 'node:http';
import https from 'node:https';
import { AppError } from '../errors/index.js';
import { deployTo, HostUnreachable, NotDeployed, sendToHost, type HostTarget } from './host-client.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction } from './runtime.js';

/**
 * A function runtime reached over HTTP at FUNCTION_RUNTIME_URL (a runtime pool on a private
 * network, see docs/functions.md). It speaks the host protocol under /fn/{functionId}:
 * deploy a version, then invoke it; a runtime that lost the version answers 409 and the
 * function is deployed again.
 */
export class RemoteRuntime implements FunctionRuntime {
  private readonly agent: http.Agent;
  private readonly base: URL;
  private readonly secure: boolean;
  private readonly deployed = new Map<string, string>();

  constructor(private readonly o: { url: string; token: string | null; timeoutMs: number }) {
    this.base = new URL(o.url);
    this.secure = this.base.protocol === 'https:';
    this.agent = this.secure ? new https.Agent({ keepAlive: true, maxSockets: 256 }) : new http.Agent({ keepAlive: true, maxSockets: 256 });
  }

  private target(id: string | null): HostTarget {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    return {
      agent: this.agent,
      hostname: this.base.hostname.replace(/^\[|\]$/g, ''),
      port: Number(this.base.port || (this.secure ? 443 : 80)),
      pathPrefix: id ? `${prefix}/fn/${encodeURIComponent(id)}` : prefix,
      secure: this.secure,
      extraHeaders: this.o.token ? { 'x-plinth-runtime-token': this.o.token } : {},
    };
  }

  warm(): void {}

  prepare(fn: RuntimeFunction): void {
    if (this.deployed.get(fn.id) !== fn.version) this.deploy(fn).catch(() => {});
  }

  async check(): Promise<void> {
    const t = this.target(null);
    await new Promise<void>((resolve, reject) => {
      const request = t.secure ? https.request : http.request;
      const req = request({ agent: t.agent, hostname: t.hostname, port: t.port, path: `${t.pathPrefix}/_plinth/health`, headers: t.extraHeaders, timeout: 3000 }, (res) => {
        res.resume();
        res.statusCode === 200 ? resolve() : reject(new Error(`runtime answered ${res.statusCode}`));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  async invoke(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    try {
      if (this.deployed.get(fn.id) !== fn.version) await this.deploy(fn);
      try {
        return await this.send(fn, req);
      } catch (err) {
        if (!(err instanceof NotDeployed)) throw err;
        this.deployed.delete(fn.id);
        // Only a request without a body can be sent again: a streamed body is gone.
        if (req.body) throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime restarted; try again.' });
        await this.deploy(fn);
        return await this.send(fn, req);
      }
    } catch (err) {
      if (err instanceof HostUnreachable || err instanceof NotDeployed) throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
      throw err;
    }
  }

  private async send(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    // The runtime enforces the limit itself; this one only catches a runtime that hangs.
    const once = () => sendToHost(this.target(fn.id), fn, req, { timeoutMs: this.o.timeoutMs + 5000, onTimeout: () => {} });
    try {
      return await once();
    } catch (err) {
      // A kept-alive connection the runtime closed (it restarted): retry once on a new one
      // when there is no body that was already consumed.
      const code = err instanceof HostUnreachable ? (err.cause as { code?: string } | null)?.code : undefined;
      if (req.body || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
      return once();
    }
  }

  private async deploy(fn: RuntimeFunction): Promise<void> {
    const { code, secrets } = await fn.load();
    const r = await deployTo(this.target(fn.id), { version: fn.version, code, secrets }, this.o.timeoutMs + 5000);
    if (!r.loaded) throw new AppError('FUNCTION_ERROR', { message: 'The function failed to load; its logs show why.' });
    this.deployed.set(fn.id, fn.version);
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
