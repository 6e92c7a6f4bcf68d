import { LRUCache } from 'lru-cache';
import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '../errors/index.js';
import type { Db } from '../db/types.js';
import type { Built, FunctionBuilder } from './build.js';
import type { FunctionLogs, LogLine } from './logs.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction } from './runtime/types.js';
import { SecretStore, type SecretInfo } from './secrets.js';
import { slugify } from './slug.js';
import { FunctionStore, type FunctionHead, type FunctionRecord, type FunctionStatus } from './store.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** A version loaded by the check of a save, and the secrets it was loaded with. */
interface Checked {
  version: string;
  secretsStamp: string;
}

export interface NewFunction {
  name: string;
  slug?: string;
  code: string;
  description?: string;
  status?: 'draft' | 'active';
}

/** One invocation as the log and the metrics see it (status null: it failed before an answer). */
export interface Invocation {
  slug: string;
  functionId: string;
  status: number | null;
  cold: boolean;
  seconds: number;
  error: string | null;
}

/** The header that carries a function's own token to it (FunctionService.credentialFor). */
export const FUNCTION_TOKEN_HEADER = 'x-plinth-function-token';

export interface FunctionServiceOptions {
  /** How long lookups on the invocation path are cached (default 1 s). */
  cacheMs?: number;
  /** Variables every function sees beside its secrets (e.g. ANON_KEY); a secret of the same name wins. */
  env?: Record<string, string>;
  /** Hears every invocation (the composition root wires it to the log and the metrics). */
  onInvoke?: (inv: Invocation) => void;
  /**
   * The function's own short-lived credential, handed to each call as
   * `x-plinth-function-token` (the composition root wires a signer; none: no header).
   */
  credentialFor?: (slug: string) => Promise<string>;
}

/**
 * Functions: admin CRUD (code checked on save), secrets, logs, and invocation through the
 * runtime. Lookups on the invocation path are cached for `cacheMs` (other API instances
 * see a change within that time; this instance at once).
 */
export class FunctionService {
  readonly store: FunctionStore;
  readonly secrets: SecretStore;
  // The caches of the invocation path, least recently used out first: a function's head for
  // `cacheMs` (null: no such function), a source's build (a save of the same code is not built twice).
  private readonly heads: LRUCache<string, { head: FunctionHead | null }>;
  private readonly compiled = new LRUCache<string, Built>({ max: 32 });
  private secretStamp: { stamp: string; at: number } | null = null;
  private readonly onInvoke: ((inv: Invocation) => void) | null;
  private readonly credentialFor: ((slug: string) => Promise<string>) | null;

  private readonly cacheMs: number;
  private readonly env: Readonly<Record<string, string>>;

  constructor(
    db: Db,
    readonly runtime: FunctionRuntime,
    readonly logStore: FunctionLogs,
    private readonly builder: FunctionBuilder,
    opts: FunctionServiceOptions = {},
  ) {
    this.store = new FunctionStore(db);
    this.secrets = new SecretStore(db);
    this.cacheMs = opts.cacheMs ?? 1000;
    this.heads = new LRUCache({ max: 10_000, ttl: Math.max(1, this.cacheMs) });
    this.env = Object.freeze({ ...opts.env });
    this.onInvoke = opts.onInvoke ?? null;
    this.credentialFor = opts.credentialFor ?? null;
  }

  list(): Promise<FunctionRecord[]> {
    return this.store.list();
  }

  get(slug: string): Promise<FunctionRecord> {
    return this.store.get(slug);
  }

  async create(input: NewFunction): Promise<FunctionRecord> {
    const built = await this.build(input.code);
    const status = input.status ?? 'active';
    const slug = input.slug ?? slugify(input.name);
    const id = randomUUID();
    let checked: Checked | null = null;
    let fn: FunctionRecord;
    try {
      if (status === 'active') checked = await this.check(id, slug, built.js);
      fn = await this.store.create({
        id,
        slug,
        name: input.name,
        description: input.description ?? '',
        code: input.code,
        status,
        artifact: { bundle: built.bundle, dependencies: built.dependencies },
      });
    } catch (err) {
      // The process the check took holds nothing that will ever run.
      if (status === 'active') this.runtime.discard(id);
      throw err;
    }
    await this.changed(slug, status, checked);
    return fn;
  }

  async update(
    slug: string,
    patch: { name?: string; code?: string; description?: string; status?: FunctionStatus },
  ): Promise<FunctionRecord> {
    // New code is compiled and its imports bundled before anything is stored: a refused build
    // leaves the version serving now as it is.
    const built = patch.code === undefined ? null : await this.build(patch.code);
    const js = built?.js ?? null;
    let checked: Checked | null = null;
    // New code of an active function, or a function becoming active, is loaded first.
    const before = js !== null || patch.status === 'active' ? await this.store.head(slug) : null;
    if (before && (patch.status ?? before.status) === 'active' && (js !== null || before.status !== 'active')) {
      const code = js ?? (await this.stored(before.id));
      if (code !== null) checked = await this.check(before.id, slug, code);
    }
    const fn = await this.store.update(
      slug,
      patch,
      built && { bundle: built.bundle, dependencies: built.dependencies },
    );
    await this.changed(slug, fn.status, checked);
    return fn;
  }

  async remove(slug: string): Promise<void> {
    await this.store.remove(slug);
    void this.changed(slug, 'draft', null);
  }

  async logs(slug: string, limit: number, after: number | null = null): Promise<LogLine[]> {
    const fn = await this.store.get(slug);
    return this.logStore.recent(fn.id, limit, after);
  }

  async putSecret(
    name: string,
    value: string,
    functions: string[] | null = null,
  ): Promise<{ secret: SecretInfo; created: boolean }> {
    const r = await this.secrets.put(name, value, functions);
    this.secretStamp = null;
    return r;
  }

  async removeSecret(name: string): Promise<void> {
    await this.secrets.remove(name);
    this.secretStamp = null;
  }

  /** Runs an active function. Missing, draft and error functions are FUNCTION_NOT_FOUND. */
  async invoke(slug: string, req: InvokeRequest): Promise<InvokeResponse> {
    const head = await this.head(slug);
    if (head?.status !== 'active') {
      throw new AppError('FUNCTION_NOT_FOUND', { message: `No active function with slug "${slug}".` });
    }
    const started = performance.now();
    const seen = (status: number | null, cold: boolean, error: string | null) =>
      this.onInvoke?.({
        slug,
        functionId: head.id,
        status,
        cold,
        seconds: (performance.now() - started) / 1000,
        error,
      });
    try {
      const token = this.credentialFor ? { [FUNCTION_TOKEN_HEADER]: await this.credentialFor(slug) } : {};
      const res = await this.runtime.invoke(await this.runtimeFunction(slug, head), {
        ...req,
        headers: { ...req.headers, ...token },
      });
      seen(res.status, res.cold === true, null);
      return res;
    } catch (err) {
      seen(null, false, err instanceof AppError ? err.code : 'INTERNAL_ERROR');
      throw err;
    }
  }

  private async runtimeFunction(
    slug: string,
    head: FunctionHead,
    checked: Checked | null = null,
  ): Promise<RuntimeFunction> {
    const secretsStamp = await this.secretsStamp();
    return {
      id: head.id,
      version: this.version(head.stamp, secretsStamp),
      // What the save's check loaded has these very secrets only if none changed since.
      ...(checked && checked.secretsStamp === secretsStamp ? { adopts: checked.version } : {}),
      load: async () => {
        const code = await this.stored(head.id);
        if (code === null)
          throw new AppError('FUNCTION_NOT_FOUND', { message: `No active function with slug "${slug}".` });
        return { code, secrets: await this.envFor(slug) };
      },
    };
  }

  /** Stops the runtime and writes the buffered logs. */
  async close(): Promise<void> {
    await this.runtime.close();
    await this.logStore.close();
  }

  /**
   * Loads a save's module before it is stored, under a version of its own: an entry (forms.ts)
   * that is not a function refuses the save (INVALID_FUNCTION_CODE) and the version loaded
   * before keeps serving. Other failures (a throw at top level, which may depend on the
   * network; a runtime that is down) do not refuse it: they show on the first call.
   */
  private async check(id: string, slug: string, code: string): Promise<Checked | null> {
    const secretsStamp = await this.secrets.stamp();
    const version = `check-${randomUUID()}`;
    try {
      await this.runtime.load({
        id,
        version,
        load: async () => ({ code, secrets: await this.envFor(slug) }),
      });
      return { version, secretsStamp };
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_FUNCTION_CODE') throw err;
      return null;
    }
  }

  // A saved active function is loaded right away (deploying means that), so its first call
  // finds it warm. What a check loaded is taken over before the save answers; otherwise the
  // work happens in the background. Neither ever fails the save.
  private async changed(slug: string, status: FunctionStatus, checked: Checked | null): Promise<void> {
    this.heads.clear();
    if (status !== 'active') return;
    const load = this.head(slug).then(async (head) => {
      if (head?.status !== 'active') return;
      const fn = await this.runtimeFunction(slug, head, checked);
      if (fn.adopts === undefined) this.runtime.prepare(fn);
      else await this.runtime.load(fn);
    });
    if (checked) await load.catch(() => {});
    else load.catch(() => {});
  }

  private async head(slug: string): Promise<FunctionHead | null> {
    const hit = this.heads.get(slug);
    if (hit) return hit.head;
    const head = await this.store.head(slug);
    this.heads.set(slug, { head });
    return head;
  }

  // The version of a function: a hash of its save stamp and of all secrets, remembered so a
  // warm call does not hash.
  private readonly versions = new LRUCache<string, string>({ max: 10_000 });
  private version(stamp: string, secrets: string): string {
    const key = `${stamp}:${secrets}`;
    let version = this.versions.get(key);
    if (version === undefined) {
      version = sha(key).slice(0, 24);
      this.versions.set(key, version);
    }
    return version;
  }

  /** What the function reads with Deno.env: the variables every function sees, then its secrets. */
  private async envFor(slug: string): Promise<Record<string, string>> {
    return { ...this.env, ...(await this.secrets.valuesFor(slug)) };
  }

  private async secretsStamp(): Promise<string> {
    if (this.secretStamp && Date.now() - this.secretStamp.at < this.cacheMs) return this.secretStamp.stamp;
    const stamp = await this.secrets.stamp();
    this.secretStamp = { stamp, at: Date.now() };
    return stamp;
  }

  /** What the runtime loads for a saved function: its stored bundle (no network), else its compiled source. */
  private async stored(id: string): Promise<string | null> {
    const row = await this.store.code(id);
    if (row === null) return null;
    return row.bundle ?? (await this.build(row.code)).js;
  }

  // A save resolves its imports again (a range may match a newer version now); a source seen
  // before on this instance is not built twice.
  private async build(source: string): Promise<Built> {
    const key = sha(source);
    let built = this.compiled.get(key);
    if (built === undefined) {
      built = await this.builder.build(source);
      this.compiled.set(key, built);
    }
    return built;
  }
}
