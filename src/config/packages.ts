import path from 'node:path';
import { int, list, raw, str, url, type Reader } from './reader.js';

/** What a deploy may import and where it fetches it from (docs/functions.md, "Imports"). */
export interface FunctionPackagesConfig {
  /** Hosts `https:` and `jsr:` imports may come from (FUNCTION_IMPORT_HOSTS), with `:port` when not 443. */
  importHosts: string[];
  /** The cache of fetched packages and modules (FUNCTION_PACKAGES_DIR, default DATA_DIR/deno). */
  cacheDir: string;
  /** How long one deploy may spend resolving and fetching (FUNCTION_BUNDLE_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Largest bundled function (FUNCTION_BUNDLE_MAX_MB). */
  maxBytes: number;
  /** The npm registry (NPM_CONFIG_REGISTRY, as npm reads it). */
  npmRegistry: string;
  /** Sent to the npm registry as a bearer token (FUNCTION_NPM_TOKEN): private packages. */
  npmToken: string | null;
  /** An .npmrc used as it is (FUNCTION_NPMRC: a path): scoped registries and their tokens. */
  npmrc: string | null;
  /** The proxy variables the fetches go through (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), passed on as set. */
  proxy: Record<string, string>;
}

/** Deno's own default for --allow-import: the public module hosts. */
export const DEFAULT_IMPORT_HOSTS = [
  'jsr.io',
  'deno.land',
  'esm.sh',
  'raw.esm.sh',
  'cdn.jsdelivr.net',
  'raw.githubusercontent.com',
  'gist.githubusercontent.com',
];

const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;
const PROXY_KEYS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

export function readFunctionPackages(r: Reader, dataDir: string): FunctionPackagesConfig {
  const hosts = list(r, 'FUNCTION_IMPORT_HOSTS') ?? DEFAULT_IMPORT_HOSTS;
  for (const h of hosts) {
    if (!HOST.test(h))
      r.problems.push(`FUNCTION_IMPORT_HOSTS must list host names, each with an optional :port (got "${h}")`);
  }
  const proxy: Record<string, string> = {};
  for (const key of PROXY_KEYS) {
    const v = raw(r, key);
    if (v !== undefined) proxy[key] = v;
  }
  return {
    importHosts: hosts.map((h) => h.toLowerCase()),
    cacheDir: path.resolve(str(r, 'FUNCTION_PACKAGES_DIR', path.join(dataDir, 'deno'))),
    timeoutMs: int(r, 'FUNCTION_BUNDLE_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
    maxBytes: int(r, 'FUNCTION_BUNDLE_MAX_MB', 20, 1, 1024) * 1024 * 1024,
    npmRegistry: url(r, 'NPM_CONFIG_REGISTRY', ['http:', 'https:']) ?? 'https://registry.npmjs.org',
    npmToken: str(r, 'FUNCTION_NPM_TOKEN'),
    npmrc: str(r, 'FUNCTION_NPMRC'),
    proxy,
  };
}
