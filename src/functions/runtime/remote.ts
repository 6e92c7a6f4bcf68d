import type { Pool } from 'undici';
import { AppError } from '../../errors/index.js';
import { checkHost, deployTo } from './control.js';
import { HostUnreachable, loadRefused, NotDeployed } from './faults.js';
import { sendToHost } from './send.js';
import { hostPool, type HostTarget } from './transport.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction } from './types.js';

// The runtime closed a kept-alive connection (it restarted) as the call was sent.
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * A function runtime reached over HTTP at FUNCTION_RUNTIME_URL (a runtime pool on a private
 * network, see docs/functions.md). It speaks the host protocol under /fn/{functionId}:
 * deploy a version, then invoke it; a runtime that lost the version answers 409 and the
 * function is deployed again.
 */
export class RemoteRuntime implements FunctionRuntime {
  private readonly pool: Pool;
  private readonly base: URL;
  private readonly deployed = new Map<string, string>();

  constructor(private readonly opts: { url: string; token: string | null; timeoutMs: number }) {
    this.base = new URL(opts.url);
    this.pool = hostPool({ origin: this.base.origin });
  }

  private target(id: string | null): HostTarget {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    return {
      dispatcher: this.pool,
      pathPrefix: id ? `${prefix}/fn/${encodeURIComponent(id)}` : prefix,
      extraHeaders: this.opts.token ? { 'x-plinth-runtime-token': this.opts.token } : {},
    };
  }

  warm(): void {}

  prepare(fn: RuntimeFunction): void {
    this.load(fn).catch(() => {});
  }

  async load(fn: RuntimeFunction): Promise<void> {
    if (this.deployed.get(fn.id) === fn.version) return;
    try {
      await this.deploy(fn);
    } catch (err) {
      if (err instanceof HostUnreachable) throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
      throw err;
    }
  }

  discard(functionId: string): void {
    this.deployed.delete(functionId);
  }

  async check(): Promise<void> {
    await checkHost(this.target(null), 3000);
  }

  async invoke(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    const cold = this.deployed.get(fn.id) !== fn.version;
    try {
      if (cold) await this.deploy(fn);
      try {
        return { ...(await this.send(fn, req)), cold };
      } catch (err) {
        if (!(err instanceof NotDeployed)) throw err;
        this.deployed.delete(fn.id);
        // Only a request without a body can be sent again: a streamed body is gone.
        if (req.body)
          throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime restarted; try again.' });
        await this.deploy(fn);
        return { ...(await this.send(fn, req)), cold: true };
      }
    } catch (err) {
      if (err instanceof HostUnreachable || err instanceof NotDeployed)
        throw new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { cause: err });
      throw err;
    }
  }

  private async send(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse> {
    // The runtime enforces the limit itself; this one only catches a runtime that hangs.
    const once = () =>
      sendToHost(this.target(fn.id), fn, req, { timeoutMs: this.opts.timeoutMs + 5000, onTimeout: () => {} });
    try {
      return await once();
    } catch (err) {
      // A kept-alive connection the runtime closed (it restarted): retry once on a new one
      // when there is no body that was already consumed.
      if (req.body || !(err instanceof HostUnreachable && CONNECTION_LOST.has(err.code ?? ''))) throw err;
      return once();
    }
  }

  // The runtime loads the module before it answers, so a refused module is known here.
  private async deploy(fn: RuntimeFunction): Promise<void> {
    const { code, secrets } = await fn.load();
    const adopts = fn.adopts !== undefined && this.deployed.get(fn.id) === fn.adopts ? { adopts: fn.adopts } : {};
    const r = await deployTo(
      this.target(fn.id),
      { version: fn.version, code, secrets, ...adopts },
      this.opts.timeoutMs + 5000,
    );
    if (!r.loaded) throw loadRefused(r);
    this.deployed.set(fn.id, fn.version);
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
