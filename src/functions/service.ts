import { LRUCache } from 'lru-cache';
import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '../errors/index.js';
import type { Db } from '../db/types.js';
import type { Built, FunctionBuilder } from './build.js';
import type { Invocation } from './invocation.js';
import type { FunctionLogs, LogLine } from './logs.js';
import type { FunctionRuntime, InvokeRequest, InvokeResponse, RuntimeFunction } from './runtime/types.js';
import { SecretStore, type SecretInfo } from './secrets.js';
import { slugify } from './slug.js';
import { writeChecked } from './checked-write.js';
import { FunctionStore, type FunctionHead, type FunctionRecord, type FunctionStatus, type Saved } from './store.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** The secrets a function may read and the stamp of all secrets, read together. */
type Snapshot = { stamp: string; values: Record<string, string> };

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

/** The header that carries a function's own token to it (FunctionService.credentialFor). */
export const FUNCTION_TOKEN_HEADER = 'x-plinth-function-token';

export interface FunctionServiceOptions {
  /** How long lookups on the invocation path are cached (default 1 s). */
  cacheMs?: number;
  /** Variables every function sees beside its secrets (e.g. ANON_KEY); a secret of the same name wins. */
  env?: Record<string, string>;
  /** Hears every invocation (the composition root wires it to the log and the metrics). */
  onInvoke?: (inv: Invocation) => void;
  /** The function's own short-lived credential, sent to each call as `x-plinth-function-token` (none: no header). */
  credentialFor?: (slug: string) => Promise<string>;
}

/**
 * Functions: admin CRUD (code checked on save), secrets, logs, and invocation through the runtime.
 * Lookups on the invocation path are cached for `cacheMs`: other instances see a change within it, this one at once.
 */
export class FunctionService {
  readonly store: FunctionStore;
  readonly secrets: SecretStore;
  // The caches of the invocation path, least recently used out first: a function's head for
  // `cacheMs` (null: no such function), a source's build (a save of the same code is not built twice).
  private readonly heads: LRUCache<string, { head: FunctionHead | null }>;
  private readonly compiled = new LRUCache<string, Built>({ max: 32 });
  private readonly runtimeFns = new LRUCache<string, RuntimeFunction>({ max: 10_000 });
  private secretStamp: { stamp: string; at: number } | null = null;
  /** Counts this instance's secret changes (a stamp read before one is not kept). */
  private secretChanges = 0;
  private readonly onInvoke: ((inv: Invocation) => void) | null;
  private readonly credentialFor: ((slug: string) => Promise<string>) | null;

  private readonly cacheMs: number;
  private readonly env: Readonly<Record<string, string>>;

  constructor(
    private readonly db: Db,
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
    const status = input.status ?? 'active';
    const slug = input.slug ?? slugify(input.name);
    // The secrets the check loads the module with are read while the code compiles.
    const secrets = status === 'active' ? this.snapshot(slug) : null;
    const built = await this.build(input.code);
    const id = randomUUID();
    const write = (store: FunctionStore) =>
      store.create({
        id,
        slug,
        name: input.name,
        description: input.description ?? '',
        code: input.code,
        status,
        artifact: { bundle: built.bundle, dependencies: built.dependencies },
      });
    const check = secrets && this.check(id, built.js, secrets);
    return this.save(slug, write, check).catch((err: unknown) => {
      // The process the check took holds nothing that will ever run.
      if (check) this.runtime.discard(id);
      throw err;
    });
  }

  async update(
    slug: string,
    patch: { name?: string; code?: string; description?: string; status?: FunctionStatus },
  ): Promise<FunctionRecord> {
    // New code of an active function, or a function becoming active, is loaded first: its row,
    // the secrets it is loaded with and the build are read at once.
    const loads = patch.code !== undefined || patch.status === 'active';
    const secrets = loads ? this.snapshot(slug) : null;
    const [built, before] = await Promise.all([
      // New code is compiled and its imports bundled before anything is stored: a refused
      // build leaves the version serving now as it is.
      patch.code === undefined ? null : this.build(patch.code),
      loads ? this.store.head(slug) : null,
    ]);
    const write = (store: FunctionStore) =>
      store.update(slug, patch, built && { bundle: built.bundle, dependencies: built.dependencies });
    const checks =
      before !== null && (patch.status ?? before.status) === 'active' && (built !== null || before.status !== 'active');
    const code = checks ? (built?.js ?? (await this.stored(before.id))) : null;
    return this.save(slug, write, code === null ? null : this.check(before!.id, code, secrets!));
  }

  /** Writes a save and deploys it; with a check, the row is kept only if the check passes. */
  private async save(
    slug: string,
    write: (store: FunctionStore) => Promise<Saved>,
    check: Promise<Checked | null> | null,
  ): Promise<FunctionRecord> {
    // The function's own token is signed meanwhile (a crypto job): the first call finds it made.
    const token = check && this.credentialFor?.(slug).catch(() => null);
    const { fn, checked } = await writeChecked(this.db, write, check);
    await Promise.all([this.changed(slug, fn.head, checked), token]);
    return fn.record;
  }

  async remove(slug: string): Promise<void> {
    await this.store.remove(slug);
    void this.changed(slug, null, null);
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
    this.secretChanges++;
    return r;
  }

  async removeSecret(name: string): Promise<void> {
    await this.secrets.remove(name);
    this.secretStamp = null;
    this.secretChanges++;
  }

  /** Runs an active function (missing, draft, error: FUNCTION_NOT_FOUND), for HTTP request `requestId` if any. */
  async invoke(slug: string, req: InvokeRequest, requestId?: string): Promise<InvokeResponse> {
    // A warm call reads its function and version from memory: no query, no hash, no new object.
    const hit = this.heads.get(slug);
    const head = hit ? hit.head : await this.head(slug);
    if (head?.status !== 'active') {
      throw new AppError('FUNCTION_NOT_FOUND', { message: `No active function with slug "${slug}".` });
    }
    const started = performance.now();
    try {
      const fn = this.runtimeFunction(slug, head, this.freshSecretsStamp() ?? (await this.secretsStamp()));
      if (this.credentialFor)
        req = { ...req, headers: { ...req.headers, [FUNCTION_TOKEN_HEADER]: await this.credentialFor(slug) } };
      const res = await this.runtime.invoke(fn, req);
      this.seen(slug, head.id, started, res.status, res.cold === true, null, requestId);
      return res;
    } catch (err) {
      this.seen(slug, head.id, started, null, false, err instanceof AppError ? err.code : 'INTERNAL_ERROR', requestId);
      throw err;
    }
  }

  private seen(
    slug: string,
    functionId: string,
    started: number,
    status: number | null,
    cold: boolean,
    error: string | null,
    requestId: string | undefined,
  ): void {
    const seconds = (performance.now() - started) / 1000;
    this.onInvoke?.({ slug, functionId, status, cold, seconds, error, requestId: requestId ?? null });
  }

  /**
   * The runtime's view of a function at a save stamp and a secrets stamp: made once per
   * version and kept, so a warm call allocates none. `checked`: what the save's check loaded,
   * adopted when no secret changed since (then not kept: the adoption is the save's own).
   */
  private runtimeFunction(
    slug: string,
    head: FunctionHead,
    secretsStamp: string,
    checked: Checked | null = null,
  ): RuntimeFunction {
    const key = `${head.id}:${head.stamp}:${secretsStamp}`;
    const known = this.runtimeFns.get(key);
    // What the save's check loaded has these very secrets only if none changed since.
    const adopts = checked && checked.secretsStamp === secretsStamp ? checked.version : undefined;
    if (known && adopts === undefined) return known;
    const fn: RuntimeFunction = {
      id: head.id,
      version: sha(key).slice(0, 24),
      ...(adopts === undefined ? {} : { adopts }),
      load: async () => {
        const code = await this.stored(head.id);
        if (code === null)
          throw new AppError('FUNCTION_NOT_FOUND', { message: `No active function with slug "${slug}".` });
        return { code, secrets: await this.envFor(slug) };
      },
    };
    if (adopts === undefined) this.runtimeFns.set(key, fn);
    return fn;
  }

  /** Stops the runtime and writes the buffered logs. */
  async close(): Promise<void> {
    await this.runtime.close();
    await this.logStore.close();
  }

  /**
   * Loads a save's module under a version of its own, before it is stored: an entry (forms.ts)
   * that is not a function refuses the save (INVALID_FUNCTION_CODE), nothing is stored and the
   * version loaded before keeps serving. Other failures (a throw at top level, which may depend
   * on the network; a runtime that is down) do not refuse it: they show on the first call.
   */
  private async check(id: string, code: string, secrets: Promise<Snapshot>): Promise<Checked | null> {
    const { stamp: secretsStamp, values } = await secrets;
    const version = `check-${randomUUID()}`;
    try {
      await this.runtime.load({ id, version, load: async () => ({ code, secrets: { ...this.env, ...values } }) });
      return { version, secretsStamp };
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_FUNCTION_CODE') throw err;
      return null;
    }
  }

  /**
   * The secrets a function may read and the stamp of all secrets, in one read; the stamp
   * serves the save's next steps too, unless a secret changed here meanwhile. Read ahead of
   * the check: a save refused before it needs them leaves no rejection unheard.
   */
  private snapshot(slug: string): Promise<Snapshot> {
    const changes = this.secretChanges;
    const read = this.secrets.snapshot(slug).then((snap) => {
      if (this.secretChanges === changes) this.secretStamp = { stamp: snap.stamp, at: Date.now() };
      return snap;
    });
    read.catch(() => {});
    return read;
  }

  // A saved active function is loaded right away (deploying means that), so its first call
  // finds it warm. What a check loaded is taken over before the save answers; otherwise the
  // work happens in the background. Neither ever fails the save.
  private async changed(slug: string, head: FunctionHead | null, checked: Checked | null): Promise<void> {
    this.heads.clear();
    // The head the save wrote: the first call after it reads no row.
    this.heads.set(slug, { head });
    if (head?.status !== 'active') return;
    const load = this.secretsStamp().then(async (secretsStamp) => {
      const fn = this.runtimeFunction(slug, head, secretsStamp, checked);
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

  /** What the function reads with Deno.env: the variables every function sees, then its secrets. */
  private async envFor(slug: string): Promise<Record<string, string>> {
    return { ...this.env, ...(await this.secrets.valuesFor(slug)) };
  }

  /** The stamp of all secrets when it was read less than `cacheMs` ago, else undefined. */
  private freshSecretsStamp(): string | undefined {
    const known = this.secretStamp;
    return known && Date.now() - known.at < this.cacheMs ? known.stamp : undefined;
  }

  private async secretsStamp(): Promise<string> {
    const fresh = this.freshSecretsStamp();
    if (fresh !== undefined) return fresh;
    const changes = this.secretChanges;
    const stamp = await this.secrets.stamp();
    if (this.secretChanges === changes) this.secretStamp = { stamp, at: Date.now() };
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
