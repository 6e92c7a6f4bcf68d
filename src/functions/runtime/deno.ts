import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { codePath } from '../../lib/code-dir.js';
import { DENIED_CIDRS, DENIED_IPV4_CIDRS, ownAddresses } from '../../lib/net-guard.js';

/** The Deno-side host script every function process runs. */
export const HOST_SCRIPT = codePath('functions', 'runtime', 'deno-host.js');

/**
 * Path of the deno binary shipped by the npm package `deno` (resolved from the package,
 * never from PATH). The package copies the binary next to its package.json on install;
 * otherwise it lives in the platform package @deno/<target>.
 */
export function denoBinary(): string {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve('deno/package.json'));
  const exe = process.platform === 'win32' ? 'deno.exe' : 'deno';
  const local = path.join(dir, exe);
  if (existsSync(local)) return local;
  const target = `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch === 'arm64' ? 'arm64' : 'x64'}${process.platform === 'linux' ? '-glibc' : ''}`;
  return path.join(path.dirname(require.resolve(`@deno/${target}/package.json`, { paths: [dir] })), exe);
}

/**
 * What Deno's own --deny-net is given (it enforces it on the address a host name resolves
 * to, so DNS names pointing here are refused too). Deno 2.9 takes CIDR ranges for IPv4 only:
 * its flag parser refuses every IPv6 range (`fc00::/7`, `[fc00::]/7`, `[fc00::/7]`, see
 * deno.test.ts), so IPv6 goes in as single addresses: loopback, unspecified, AWS's metadata
 * address (IPv4-mapped IPv6 addresses are checked as their IPv4 address). The IPv6 ranges
 * (src/lib/net-guard.ts) are refused inside the sandbox by the guard of deno-net-guard.js.
 */
export const DENIED_NET = [...DENIED_IPV4_CIDRS, '[::1]', '[::]', '[fd00:ec2::254]', 'localhost'];

/**
 * DENIED_NET plus every address of this machine's own network interfaces: a public address on
 * the network card reaches every service listening on all interfaces (the API server, a remote
 * runtime, Postgres, Redis), firewalled from outside or not. Read when a process starts, so an
 * address the machine gains later is covered from the next process on.
 */
export function deniedNet(): string[] {
  const own = ownAddresses().map((a) => (a.includes(':') ? `[${a}]` : a));
  return [...new Set([...DENIED_NET, ...own])];
}

/** What the sandbox's guard refuses (deno-net-guard.js): every denied range and this machine's addresses. */
export function guardSpec(): { cidrs: readonly string[]; addresses: string[] } {
  return { cidrs: DENIED_CIDRS, addresses: ownAddresses() };
}

/**
 * Command-line arguments of one host process (see deno-host.js); `apiSocket` is the socket of
 * Plinth's bridge (bridge.ts), which its workers may open.
 */
export function hostArgs(opts: { socketDir: string; tmpDir: string; memoryMb: number; apiSocket?: string }): string[] {
  const bridge = opts.apiSocket ? `,${opts.apiSocket}` : '';
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--no-npm',
    '--unstable-worker-options',
    `--v8-flags=--max-old-space-size=${opts.memoryMb}`,
    '--allow-net',
    `--deny-net=${deniedNet().join(',')}`,
    `--allow-read=${opts.socketDir},${opts.tmpDir}${bridge}`,
    `--allow-write=${opts.socketDir},${opts.tmpDir}${bridge}`,
    '--deny-run',
    '--deny-ffi',
    '--deny-env',
    '--deny-sys',
    '--deny-import',
    HOST_SCRIPT,
    opts.socketDir,
    opts.tmpDir,
    JSON.stringify(guardSpec()),
    opts.apiSocket ?? '',
  ];
}
