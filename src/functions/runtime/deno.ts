import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Deno-side host script every function process runs. */
export const HOST_SCRIPT = fileURLToPath(new URL('./deno-host.js', import.meta.url));

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
 * Addresses functions may never reach. Deno enforces --deny-net on the address a host name
 * resolves to, so DNS names pointing here are refused too. Deno 2.9 takes CIDR ranges for
 * IPv4 only; for IPv6 it takes single addresses, so loopback, the unspecified address and
 * the cloud metadata addresses are listed one by one (IPv4-mapped IPv6 addresses are
 * checked as their IPv4 address).
 */
export const DENIED_NET = [
  '0.0.0.0/8', // "this network"; 0.0.0.0 reaches local listeners
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4',
  '[::1]',
  '[::]',
  '[fd00:ec2::254]', // AWS metadata over IPv6
  'localhost',
];

/**
 * DENIED_NET plus every address of this machine's own network interfaces: a public address on
 * the network card reaches every service listening on all interfaces (the API server, a remote
 * runtime, Postgres, Redis), firewalled from outside or not. Read when a process starts, so an
 * address the machine gains later is covered from the next process on.
 */
export function deniedNet(): string[] {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined)
    .map((a) => (a.family === 'IPv6' ? `[${a.address.replace(/%.*$/, '')}]` : a.address));
  return [...new Set([...DENIED_NET, ...own])];
}

/** Command-line arguments of one host process (see deno-host.js). */
export function hostArgs(opts: { socketDir: string; tmpDir: string; memoryMb: number }): string[] {
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
    `--allow-read=${opts.socketDir},${opts.tmpDir}`,
    `--allow-write=${opts.socketDir},${opts.tmpDir}`,
    '--deny-run',
    '--deny-ffi',
    '--deny-env',
    '--deny-sys',
    '--deny-import',
    HOST_SCRIPT,
    opts.socketDir,
    opts.tmpDir,
  ];
}
