import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ownAddresses } from '../../lib/net-guard.js';
import { deniedNet, denoBinary, guardSpec } from './deno.js';

// The real deno binary: what its --deny-net takes, and the guard for the IPv6 ranges it
// cannot hold. No test here sends a packet: the guard runs without any net permission, so
// an address it lets through ends on Deno's own refusal instead of the network.
const dir = mkdtempSync(path.join(tmpdir(), 'plinth-deno-net-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function deno(
  args: string[],
  script: string,
  scriptArgs: string[] = [],
): { status: number | null; out: string; err: string } {
  const file = path.join(dir, `s${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, script);
  const r = spawnSync(denoBinary(), ['run', '--no-prompt', '--no-config', ...args, file, ...scriptArgs], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const QUERY = `const out = {};
for (const host of Deno.args) out[host] = (await Deno.permissions.query({ name: 'net', host })).state;
console.log(JSON.stringify(out));`;

describe('the Deno sandbox network rules', () => {
  it("Deno's --deny-net refuses IPv6 ranges in every spelling (why the guard exists)", () => {
    for (const range of ['fc00::/7', '[fc00::]/7', '[fc00::/7]']) {
      const r = deno(['--allow-net', `--deny-net=${range}`], 'console.log("ran")');
      expect(r.status, range).not.toBe(0);
      expect(r.out).not.toContain('ran');
    }
  });

  it('--deny-net takes deniedNet() and refuses loopback, unspecified, metadata and own addresses', () => {
    const own = ownAddresses().map((a) => (a.includes(':') ? `[${a}]` : a));
    const denied = [
      '[::1]',
      '[::]',
      '[fd00:ec2::254]',
      '[::ffff:10.1.2.3]',
      '[::ffff:127.0.0.1]',
      '10.1.2.3',
      '169.254.169.254',
      'localhost',
      ...own,
    ];
    const r = deno(['--allow-net', `--deny-net=${deniedNet().join(',')}`], QUERY, [
      ...denied,
      '8.8.8.8',
      'example.com',
      '[2001:4860:4860::8888]',
    ]);
    expect(r.status, r.err).toBe(0);
    const states = JSON.parse(r.out);
    for (const host of denied) expect(states[host], host).toBe('denied');
    for (const host of ['8.8.8.8', 'example.com', '[2001:4860:4860::8888]']) expect(states[host], host).toBe('granted');
  });

  it('the guard refuses the private IPv6 ranges, IPv4 embedded in IPv6, and names resolving to them, on fetch, WebSocket, Deno.connect and node:net', () => {
    const guard = fileURLToPath(new URL('./deno-net-guard.js', import.meta.url));
    const script = `import { installNetGuard } from ${JSON.stringify(guard)};
await installNetGuard(JSON.parse(Deno.args[0]));
const net = await import('node:net');
const out = {};
const attempt = async (key, fn) => { try { await fn(); out[key] = 'passed'; } catch (e) { out[key] = String(e?.message); } };
const node = (o) => new Promise((res, rej) => { const s = net.connect(o); s.on('error', rej); s.on('connect', res); });
for (const host of JSON.parse(Deno.args[1])) {
  const h = host.includes(':') ? '[' + host + ']' : host;
  await attempt('fetch ' + host, () => fetch('http://' + h + ':8080/'));
  if (host.includes(':')) await attempt('ws ' + host, () => new WebSocket('ws://' + h + ':8080/'));
  await attempt('connect ' + host, () => Deno.connect({ hostname: host, port: 8080 }));
  await attempt('connectTls ' + host, () => Deno.connectTls({ hostname: host, port: 8443 }));
  await attempt('node ' + host, () => node({ host, port: 8080 }));
  await attempt('nodePort ' + host, () => new Promise((res, rej) => { const s = net.connect(8080, host); s.on('error', rej); s.on('connect', res); }));
}
console.log(JSON.stringify(out));`;
    const privateIps = [
      ...new Set([
        '::',
        '::1',
        'fc00::1',
        'fd12:3456::1',
        'fe80::1',
        'febf::1',
        'fec0::1',
        'ff02::1',
        '::ffff:10.0.0.1',
        '64:ff9b::a00:1',
        '64:ff9b::a9fe:a9fe',
        '2002:a00:1::1',
        '2002:c0a8:101::',
        // Issue 40: IPv4-compatible, local-use NAT64, Teredo, documentation
        '::127.0.0.1',
        '::a9fe:a9fe',
        '64:ff9b:1::a00:1',
        '2001::1',
        '2001:0:4136:e378:8000:63bf:3fff:fdd2',
        '2001:db8::1',
        ...ownAddresses().filter((a) => a.includes(':')),
      ]),
    ];
    const publicIps = ['2606:4700:4700::1111', '64:ff9b::808:808', '2a00:1450:4001::1'];
    // Only loopback is allowed here: an address the guard let through is refused by Deno
    // (no packet), and a name it let through could only reach this machine's loopback.
    const r = deno(['--allow-net=localhost'], script, [
      JSON.stringify(guardSpec()),
      JSON.stringify([...privateIps, ...publicIps, 'localhost']),
    ]);
    expect(r.status, r.err).toBe(0);
    const out: Record<string, string> = JSON.parse(r.out);
    expect(Object.keys(out)).toHaveLength(6 * (privateIps.length + publicIps.length) + 5);
    for (const [key, message] of Object.entries(out)) {
      const host = key.split(' ')[1]!;
      if (host === 'localhost')
        expect(message, key).toMatch(/it resolves to (127\.0\.0\.1|::1), a private or local address/);
      else if (privateIps.includes(host)) expect(message, key).toMatch(/a private or local address/);
      // A public address goes on, to Deno's own refusal.
      else expect(message, key).toMatch(/run again with the --allow-net flag/);
    }
  });
});
