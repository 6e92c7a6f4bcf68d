import { EnvHttpProxyAgent, fetch } from 'undici';
import { AppError } from '../errors/index.js';
import { parseNpm, type ImportRef } from './imports.js';
import { BundleFailure } from './runtime/bundler.js';

interface RegistryOptions {
  npmRegistry: string;
  npmToken: string | null;
  timeoutMs: number;
  /** The proxy variables deno was given: the registry is asked the same way. */
  proxy: Readonly<Record<string, string>>;
}

function proxyAgent(proxy: Readonly<Record<string, string>>): EnvHttpProxyAgent | undefined {
  const httpsProxy = proxy.HTTPS_PROXY ?? proxy.https_proxy;
  const httpProxy = proxy.HTTP_PROXY ?? proxy.http_proxy;
  if (!httpsProxy && !httpProxy) return undefined;
  return new EnvHttpProxyAgent({ httpProxy, httpsProxy, noProxy: proxy.NO_PROXY ?? proxy.no_proxy });
}

const fail = (
  code: 'FUNCTION_IMPORT_NOT_FOUND' | 'FUNCTION_IMPORT_NOT_ALLOWED' | 'FUNCTION_IMPORT_FAILED',
  message: string,
) => new AppError(code, { message });

const unavailable = (message: string, cause?: unknown) =>
  new AppError('FUNCTION_REGISTRY_UNAVAILABLE', { message, ...(cause === undefined ? {} : { cause }) });

/** The user's own specifier for a package name deno reported, or the name as an npm specifier. */
function specifierFor(name: string, remote: ImportRef[], fallback: string): string {
  return remote.find((r) => r.kind === 'npm' && parseNpm(r.specifier)?.name === name)?.specifier ?? fallback;
}

/**
 * Why deno could not find `name@range`: it says the same for a missing package, a missing
 * version and a registry it could not reach, so the registry is asked once, with the same
 * token and a short bound, and its answer decides (404: not found; no answer: unavailable).
 */
async function explainNpm(constraint: string, remote: ImportRef[], o: RegistryOptions): Promise<AppError> {
  const at = constraint.lastIndexOf('@');
  const name = at > 0 ? constraint.slice(0, at) : constraint;
  const range = at > 0 ? constraint.slice(at + 1) : '*';
  const specifier = specifierFor(name, remote, `npm:${constraint}`);
  const url = `${o.npmRegistry.replace(/\/+$/, '')}/${name.replace('/', '%2f')}`;
  let res: Awaited<ReturnType<typeof fetch>>;
  const dispatcher = proxyAgent(o.proxy);
  try {
    res = await fetch(url, {
      headers: {
        accept: 'application/vnd.npm.install-v1+json',
        ...(o.npmToken ? { authorization: `Bearer ${o.npmToken}` } : {}),
      },
      signal: AbortSignal.timeout(Math.min(o.timeoutMs, 15_000)),
      ...(dispatcher ? { dispatcher } : {}),
    });
  } catch (err) {
    void dispatcher?.close();
    return unavailable(
      `Import "${specifier}": the npm registry ${o.npmRegistry} could not be reached (${String((err as Error).cause ?? (err as Error).message)}).`,
      err,
    );
  }
  void dispatcher?.close();
  const body = (await res.json().catch(() => null)) as { error?: string; 'dist-tags'?: Record<string, string> } | null;
  if (res.status >= 500)
    return unavailable(`Import "${specifier}": the npm registry ${o.npmRegistry} answered ${res.status}.`);
  if (!res.ok) {
    const said = body?.error ? `: ${body.error}` : '';
    return fail(
      'FUNCTION_IMPORT_NOT_FOUND',
      `Import "${specifier}": the npm registry answered ${res.status}${said} (no package "${name}").`,
    );
  }
  const latest = body?.['dist-tags']?.latest;
  return fail(
    'FUNCTION_IMPORT_NOT_FOUND',
    `Import "${specifier}": package "${name}" has no version matching "${range}"${latest ? ` (latest is ${latest})` : ''}.`,
  );
}

/** Where in the cache a failing module lives, as a reader knows it: `pkg/version/file` or the URL. */
function placeOf(f: BundleFailure): string {
  if (!f.file) return '';
  const npm = /\/npm\/[^/]+\/(.+)$/.exec(f.file);
  return ` (in ${npm ? npm[1] : f.file}${f.line ? `:${f.line}` : ''})`;
}

/** Turns what `deno bundle` reported into the error the deploy answers with. */
export async function explainFailure(err: unknown, remote: ImportRef[], o: RegistryOptions): Promise<unknown> {
  if (!(err instanceof BundleFailure)) return err;
  const m = err.message;
  let x: RegExpExecArray | null;
  if ((x = /^Could not find constraint '(.+)' in the list of packages/.exec(m))) return explainNpm(x[1]!, remote, o);
  if ((x = /^Could not resolve '(npm:[^']+)'/.exec(m))) {
    return fail('FUNCTION_IMPORT_NOT_FOUND', `Import "${x[1]}": the package has no such path.`);
  }
  if ((x = /^Requires import access to "([^"]+)"/.exec(m))) {
    return fail(
      'FUNCTION_IMPORT_NOT_ALLOWED',
      `An import reaches ${x[1]}, which is not in FUNCTION_IMPORT_HOSTS${placeOf(err)}.`,
    );
  }
  if ((x = /^Module not found "([^"]+)"/.exec(m)))
    return fail('FUNCTION_IMPORT_NOT_FOUND', `Import "${x[1]}": not found (404).`);
  if ((x = /^Import '([^']+)' failed/.exec(m)) || (x = /manifest for '([^']+)' failed to load/.exec(m))) {
    return unavailable(
      `Import "${x[1]}": could not be fetched (${m.replace(/^.*?failed\.?:?\s*/, '') || 'no answer'}).`,
    );
  }
  if ((x = /^Do not know how to load path: deno:(jsr:\S+)/.exec(m))) {
    return fail(
      'FUNCTION_IMPORT_NOT_FOUND',
      `Import "${x[1]}": jsr.io has no such package or version, or could not be reached.`,
    );
  }
  return fail('FUNCTION_IMPORT_FAILED', `Bundling the imports failed: ${m}${placeOf(err)}`);
}
