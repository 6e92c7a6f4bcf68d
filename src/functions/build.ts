import { AppError } from '../errors/index.js';
import { compileFunction } from './code.js';
import { explainFailure } from './bundle-errors.js';
import { checkImports, importsOf, parseNpm, type ImportRef } from './imports.js';
import { BundleTimeout, type DenoBundler, type DenoLock } from './runtime/bundler.js';
import type { Dependency } from './store.js';

/** A saved function's runnable form: the bundle when it imports packages, with what they resolved to. */
export interface Built {
  /** The JavaScript the runtime loads. */
  js: string;
  /** Set when the imports were bundled in: stored, so a restart needs no network. */
  bundle: string | null;
  dependencies: Dependency[];
}

export interface BuilderOptions {
  bundler: DenoBundler;
  importHosts: readonly string[];
  maxBytes: number;
  npmRegistry: string;
  npmToken: string | null;
  timeoutMs: number;
  proxy: Readonly<Record<string, string>>;
}

// Deno's bundle makes `require` from import.meta.url, which for the worker's data: URL is no
// file URL (createRequire throws). A fixed file URL outside every readable folder: built-ins
// resolve, anything else is not found.
const CREATE_REQUIRE = '__deno_internal_createRequire(import.meta.url)';
const CREATE_REQUIRE_FIXED = '__deno_internal_createRequire("file:///plinth/function.js")';

/** The version a specifier resolved to, read from deno's lockfile. */
export function resolvedOf(ref: ImportRef, lock: DenoLock): string {
  const specifiers = lock.specifiers ?? {};
  if (ref.kind === 'npm') {
    const npm = parseNpm(ref.specifier)!;
    const key =
      Object.keys(specifiers).find((k) => k === `npm:${npm.name}@${npm.range}`) ??
      Object.keys(specifiers).find((k) => k.startsWith(`npm:${npm.name}@`));
    return key ? `npm:${npm.name}@${specifiers[key]!.replace(/_.*$/, '')}${npm.subpath}` : ref.specifier;
  }
  if (ref.kind === 'jsr') {
    const m = /^jsr:\/?(@[^/@]+\/[^/@]+)(?:@([^/]*))?(\/.*)?$/.exec(ref.specifier);
    if (!m) return ref.specifier;
    const key =
      Object.keys(specifiers).find((k) => k === `jsr:${m[1]}@${m[2] || '*'}`) ??
      Object.keys(specifiers).find((k) => k.startsWith(`jsr:${m[1]}@`));
    return key ? `jsr:${m[1]}@${specifiers[key]}${m[3] ?? ''}` : ref.specifier;
  }
  return ref.specifier;
}

/** Compiles a function and, when it imports packages or URLs, bundles them in at deploy time. */
export class FunctionBuilder {
  constructor(private readonly o: BuilderOptions) {}

  async build(source: string): Promise<Built> {
    const js = await compileFunction(source);
    const refs = await importsOf(js);
    checkImports(refs, this.o.importHosts);
    const remote = refs.filter((r) => !r.dynamic && (r.kind === 'npm' || r.kind === 'jsr' || r.kind === 'remote'));
    if (remote.length === 0) return { js, bundle: null, dependencies: [] };
    const external = refs.filter((r) => r.dynamic).map((r) => r.specifier);
    let out: { code: string; lock: DenoLock };
    try {
      out = await this.o.bundler.bundle(js, external);
    } catch (err) {
      if (err instanceof BundleTimeout) {
        throw new AppError('FUNCTION_REGISTRY_UNAVAILABLE', {
          message: `Fetching the imports (${remote.map((r) => r.specifier).join(', ')}) took longer than ${this.o.timeoutMs / 1000} s.`,
          cause: err,
        });
      }
      throw await explainFailure(err, remote, this.o);
    }
    const bundle = out.code.replace(CREATE_REQUIRE, CREATE_REQUIRE_FIXED);
    const size = Buffer.byteLength(bundle, 'utf8');
    if (size > this.o.maxBytes) {
      throw new AppError('FUNCTION_BUNDLE_TOO_LARGE', {
        message: `The function with its imports is ${(size / 1048576).toFixed(1)} MB; at most ${this.o.maxBytes / 1048576} MB may be deployed (FUNCTION_BUNDLE_MAX_MB).`,
      });
    }
    const dependencies = remote.map((r) => ({ specifier: r.specifier, resolved: resolvedOf(r, out.lock) }));
    return { js: bundle, bundle, dependencies };
  }
}
