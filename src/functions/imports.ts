import { build } from './esbuild.js';
import { AppError } from '../errors/index.js';

/** One import of a function's module, by its kind. */
export interface ImportRef {
  specifier: string;
  kind: 'npm' | 'jsr' | 'remote' | 'node' | 'other';
  /** Only reached by `import()`: left to the run time, where the sandbox refuses remote ones as before. */
  dynamic: boolean;
}

/** An `npm:` specifier taken apart: `npm:@scope/name@range/sub/path`. */
export interface NpmSpecifier {
  name: string;
  range: string;
  subpath: string;
}

const NPM = /^npm:\/?((?:@[^/@\s]+\/)?[^/@\s]+)(?:@([^/\s]*))?(\/.*)?$/;

/** Parses `npm:...`; null when it is not a well-formed npm specifier. */
export function parseNpm(specifier: string): NpmSpecifier | null {
  const m = NPM.exec(specifier);
  if (!m) return null;
  return { name: m[1]!, range: m[2] || '*', subpath: m[3] ?? '' };
}

function kindOf(specifier: string): ImportRef['kind'] {
  if (specifier.startsWith('npm:')) return 'npm';
  if (specifier.startsWith('jsr:')) return 'jsr';
  if (/^https?:\/\//i.test(specifier)) return 'remote';
  if (specifier.startsWith('node:')) return 'node';
  return 'other';
}

/**
 * The static and literal dynamic imports (and require calls) of a compiled module, in order,
 * each once. Nothing is resolved: every path is kept external.
 */
export async function importsOf(js: string): Promise<ImportRef[]> {
  const result = await build({
    stdin: { contents: js, loader: 'js', sourcefile: 'function.js' },
    write: false,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    metafile: true,
    logLevel: 'silent',
    plugins: [
      { name: 'external', setup: (b) => b.onResolve({ filter: /.*/ }, (a) => ({ path: a.path, external: true })) },
    ],
  });
  const refs = new Map<string, ImportRef>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) {
      const dynamic = imp.kind === 'dynamic-import';
      const seen = refs.get(imp.path);
      if (seen) seen.dynamic &&= dynamic;
      else refs.set(imp.path, { specifier: imp.path, kind: kindOf(imp.path), dynamic });
    }
  }
  return [...refs.values()];
}

/** The host of a URL as FUNCTION_IMPORT_HOSTS names it: `host` on the scheme's default port, else `host:port`. */
export function hostOf(u: URL): string {
  return u.port ? `${u.hostname}:${u.port}` : u.hostname;
}

/**
 * Refuses what a deploy may not import (FUNCTION_IMPORT_NOT_ALLOWED): relative, file and bare
 * imports (a function is one file), `https:` of a host not allowed, `jsr:` when jsr.io is not
 * allowed, and malformed `npm:` specifiers.
 */
export function checkImports(refs: ImportRef[], allowedHosts: readonly string[]): void {
  const allowed = new Set(allowedHosts);
  for (const { specifier, kind, dynamic } of refs) {
    if (dynamic) continue;
    const refuse = (why: string) => {
      throw new AppError('FUNCTION_IMPORT_NOT_ALLOWED', { message: `Import "${specifier}": ${why}` });
    };
    if (kind === 'npm' && !parseNpm(specifier))
      refuse('not an npm specifier (npm:name, npm:name@range, npm:@scope/name/sub/path).');
    if (kind === 'jsr' && !allowed.has('jsr.io')) refuse('jsr.io is not in FUNCTION_IMPORT_HOSTS.');
    if (kind === 'remote') {
      let host: string;
      try {
        host = hostOf(new URL(specifier));
      } catch {
        return refuse('not a valid URL.');
      }
      if (!allowed.has(host)) refuse(`the host ${host} is not in FUNCTION_IMPORT_HOSTS.`);
    }
    if (kind === 'other') {
      refuse(
        'a function is one file and imports only npm:, jsr:, node: specifiers and https: URLs (write npm:name for a package).',
      );
    }
  }
}
