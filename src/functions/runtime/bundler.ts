import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where and how `deno bundle` fetches a function's imports (config/packages.ts). */
export interface BundlerOptions {
  binary: string;
  cacheDir: string;
  importHosts: readonly string[];
  timeoutMs: number;
  npmRegistry: string;
  npmToken: string | null;
  /** Text of an .npmrc to use as it is (scoped registries and their tokens). */
  npmrc: string | null;
  proxy: Readonly<Record<string, string>>;
}

/** Deno's lockfile (version 5): what each specifier resolved to. */
export interface DenoLock {
  specifiers?: Record<string, string>;
  jsr?: Record<string, unknown>;
  npm?: Record<string, unknown>;
  remote?: Record<string, string>;
}

/** `deno bundle` refused: its first error line and where it points (file URL, line, column). */
export class BundleFailure extends Error {
  constructor(
    message: string,
    readonly file: string | null,
    readonly line: number | null,
    readonly column: number | null,
  ) {
    super(message);
    this.name = 'BundleFailure';
  }
}

/** `deno bundle` did not finish in time (a slow or unreachable registry). */
export class BundleTimeout extends Error {}

const ANSI = /\u001b\[[0-9;]*m/g;
const MAX_STDERR = 64 * 1024;

/**
 * The first `error:` of deno's output with its numbered causes (`0: error sending request…`),
 * and the first `at file:line:col` under it (after a code snippet, for a syntax error).
 */
export function parseBundleError(stderr: string): BundleFailure {
  const lines = stderr.replace(ANSI, '').split('\n');
  const i = lines.findIndex((l) => l.startsWith('error: '));
  if (i < 0)
    return new BundleFailure(lines.filter(Boolean).slice(-3).join(' ') || 'deno bundle failed', null, null, null);
  const parts = [lines[i]!.slice('error: '.length).trim()];
  let at: RegExpExecArray | null = null;
  for (const line of lines.slice(i + 1)) {
    if (line.startsWith('error: ') || line === '') break;
    const cause = /^\s+\d+: (.+)$/.exec(line);
    if (cause && parts.length < 3) parts.push(cause[1]!.trim());
    at = /^\s+at (.+):(\d+):(\d+)$/.exec(line);
    if (at) break;
  }
  return new BundleFailure(parts.join(': '), at?.[1] ?? null, at ? Number(at[2]) : null, at ? Number(at[3]) : null);
}

/** The .npmrc deno reads from HOME: the registry, its token, and the operator's own file first. */
export function npmrcText(o: Pick<BundlerOptions, 'npmRegistry' | 'npmToken' | 'npmrc'>): string {
  const registry = `${o.npmRegistry.replace(/\/+$/, '')}/`;
  const lines = [o.npmrc ?? '', `registry=${registry}`];
  if (o.npmToken) lines.push(`${registry.replace(/^https?:/, '')}:_authToken=${o.npmToken}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Bundles one function module with its `npm:`, `jsr:` and `https:` imports into one ES module
 * by `deno bundle` (Deno 2.9, esbuild inside), fetching into the shared cache `cacheDir`
 * (DENO_DIR) so a later deploy of the same imports needs no network. No lifecycle script
 * runs (no node_modules dir); remote hosts are limited by --allow-import.
 */
export class DenoBundler {
  constructor(private readonly o: BundlerOptions) {}

  async bundle(js: string, external: readonly string[]): Promise<{ code: string; lock: DenoLock }> {
    const dir = path.join(this.o.cacheDir, 'builds', randomUUID());
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(path.join(dir, 'function.js'), js);
      await writeFile(path.join(dir, '.npmrc'), npmrcText(this.o), { mode: 0o600 });
      await this.run(dir, external);
      const code = await readFile(path.join(dir, 'out.js'), 'utf8');
      const lock = JSON.parse(await readFile(path.join(dir, 'deno.lock'), 'utf8').catch(() => '{}')) as DenoLock;
      return { code, lock };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private args(dir: string, external: readonly string[]): string[] {
    return [
      'bundle',
      '--quiet',
      '--no-config',
      `--lock=${path.join(dir, 'deno.lock')}`,
      '--node-modules-dir=none',
      '--platform=deno',
      '--format=esm',
      `--allow-import=${this.o.importHosts.join(',')}`,
      ...external.map((e) => `--external=${e}`),
      '--output',
      path.join(dir, 'out.js'),
      path.join(dir, 'function.js'),
    ];
  }

  private run(dir: string, external: readonly string[]): Promise<void> {
    const env: Record<string, string> = {
      HOME: dir,
      DENO_DIR: this.o.cacheDir,
      NO_COLOR: '1',
      DENO_NO_UPDATE_CHECK: '1',
      // The machine's own CAs too: a company proxy or mirror with its own certificate.
      DENO_TLS_CA_STORE: 'mozilla,system',
      NPM_CONFIG_REGISTRY: this.o.npmRegistry,
      ...this.o.proxy,
    };
    return new Promise((resolve, reject) => {
      const child = spawn(this.o.binary, this.args(dir, external), {
        cwd: dir,
        env,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        if (stderr.length < MAX_STDERR) stderr += d.toString('utf8');
      });
      // The whole group: deno and the esbuild it starts.
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {}
        reject(new BundleTimeout(`deno bundle took longer than ${this.o.timeoutMs / 1000} s`));
      }, this.o.timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(parseBundleError(stderr));
      });
    });
  }
}
