// The function sandbox's guard for the IPv6 ranges Deno's --deny-net cannot express (Deno 2.9
// takes IPv6 only as single addresses; see deno.ts). Plain JavaScript for Deno: deno-host.js
// puts the source of installNetGuard into each function worker and runs it before the
// function's code loads, with the list of src/lib/net-guard.ts (guardSpec() in deno.ts).
//
// It refuses, before any packet, a connection whose target is written as an IP address in a
// denied range or of this machine: fetch, WebSocket, Deno.connect, Deno.connectTls and
// node:net (and so node:http, node:https, node:tls). It cannot see the address a host name
// resolves to: a DNS name pointing into an IPv6 private range is only refused by Deno when
// the address is one of --deny-net's single addresses (docs/functions.md, "Network").

/** Installs the guard in this worker; `spec` is {cidrs: string[], addresses: string[]}. */
export async function installNetGuard(spec) {
  const { BlockList, isIP, Socket } = await import('node:net');
  const list = new BlockList();
  for (const cidr of spec.cidrs) {
    const [ip, bits] = cidr.split('/');
    list.addSubnet(ip, Number(bits), isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  }
  for (const a of spec.addresses) list.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  const check = (host) => {
    if (typeof host !== 'string') return;
    const bare = host.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    const family = isIP(bare);
    if (family !== 0 && list.check(bare, family === 6 ? 'ipv6' : 'ipv4')) {
      throw new Deno.errors.NotCapable(`Requires net access to "${host}": a private or local address, which functions may not reach.`);
    }
  };
  const checkUrl = (url) => {
    let host = null;
    try {
      host = new URL(url).hostname;
    } catch {
      return; // not a URL: the original API reports it
    }
    check(host);
  };
  const pin = (obj, name, value) => Object.defineProperty(obj, name, { value, writable: false, configurable: false });

  const fetch0 = globalThis.fetch;
  pin(globalThis, 'fetch', function fetch(input, init) {
    try {
      checkUrl(input instanceof Request ? input.url : input instanceof URL ? input.href : String(input));
    } catch (err) {
      return Promise.reject(err);
    }
    return fetch0.call(this, input, init);
  });
  const WebSocket0 = globalThis.WebSocket;
  pin(globalThis, 'WebSocket', class WebSocket extends WebSocket0 {
    constructor(url, protocols) {
      checkUrl(url instanceof URL ? url.href : String(url));
      super(url, protocols);
    }
  });
  for (const name of ['connect', 'connectTls']) {
    const original = Deno[name];
    pin(Deno, name, function (options) {
      try {
        check(options?.hostname);
      } catch (err) {
        return Promise.reject(err);
      }
      return original.call(this, options);
    });
  }
  const connect0 = Socket.prototype.connect;
  pin(Socket.prototype, 'connect', function connect(...args) {
    const [first, second] = args;
    const options = Array.isArray(first) ? first[0] : first;
    check(typeof options === 'object' && options !== null ? options.host : second);
    return connect0.apply(this, args);
  });
}
