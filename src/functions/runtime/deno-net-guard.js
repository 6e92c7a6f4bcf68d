// The function sandbox's guard for the IPv6 ranges Deno's --deny-net cannot express (Deno 2.9
// takes IPv6 only as single addresses; see deno.ts). Plain JavaScript for Deno: deno-host.js
// puts the source of installNetGuard into each function worker and runs it before the
// function's code loads, with the list of src/lib/net-guard.ts (guardSpec() in deno.ts).
//
// It refuses, before any packet, a connection to an address in a denied range or of this
// machine: written as an IP address (fetch, WebSocket, Deno.connect, Deno.connectTls,
// node:net and so node:http, node:https, node:tls), or a host name resolving to one. fetch,
// Deno.connect and Deno.connectTls resolve the name first and check every answer (Deno then
// resolves again: a name that changes its answer in between is not caught); node:net checks
// the very answer it connects to (its `lookup` option); WebSocket checks written addresses
// only (its constructor cannot wait). See docs/functions.md, "Private IPv6".

/**
 * Installs the guard in this worker; `spec` is {cidrs: string[], addresses: string[]}. `bridge`
 * (deno-bridge.js) takes the fetches of Plinth's own URL, which never reach the network.
 */
export async function installNetGuard(spec, bridge) {
  const { BlockList, isIP, Socket } = await import('node:net');
  const dns = await import('node:dns');
  const list = new BlockList();
  for (const cidr of spec.cidrs) {
    const [ip, bits] = cidr.split('/');
    list.addSubnet(ip, Number(bits), isIP(ip) === 6 ? 'ipv6' : 'ipv4');
  }
  for (const a of spec.addresses) list.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
  const bareOf = (host) => host.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const blocked = (ip) => {
    const family = isIP(ip);
    return family !== 0 && list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
  };
  const refused = (host, via) =>
    new Deno.errors.NotCapable(
      `Requires net access to "${host}": ${via ? `it resolves to ${via}, ` : ''}a private or local address, which functions may not reach.`,
    );
  const check = (host) => {
    if (typeof host === 'string' && blocked(bareOf(host))) throw refused(host);
  };
  // A host name: every address it resolves to must pass. A failed lookup is left to the call.
  const resolveCheck = async (host) => {
    check(host);
    if (typeof host !== 'string' || host === '' || isIP(bareOf(host)) !== 0) return;
    let answers = [];
    try {
      answers = await dns.promises.lookup(host, { all: true, verbatim: true });
    } catch {
      return;
    }
    for (const a of answers) if (blocked(a.address)) throw refused(host, a.address);
  };
  const hostOf = (url) => {
    try {
      return new URL(url).hostname;
    } catch {
      return null; // not a URL: the original API reports it
    }
  };
  const checkUrl = (url) => check(hostOf(url));
  const pin = (obj, name, value) => Object.defineProperty(obj, name, { value, writable: false, configurable: false });

  const fetch0 = globalThis.fetch;
  pin(globalThis, 'fetch', async function fetch(input, init) {
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : String(input);
    const bridged = bridge?.route(url);
    if (bridged) return bridged(fetch0, input, init);
    await resolveCheck(hostOf(url));
    return fetch0.call(this, input, init);
  });
  const WebSocket0 = globalThis.WebSocket;
  pin(
    globalThis,
    'WebSocket',
    class WebSocket extends WebSocket0 {
      constructor(url, protocols) {
        checkUrl(url instanceof URL ? url.href : String(url));
        super(url, protocols);
      }
    },
  );
  for (const name of ['connect', 'connectTls']) {
    const original = Deno[name];
    pin(Deno, name, async function (options) {
      await resolveCheck(options?.hostname);
      return original.call(this, options);
    });
  }
  // node:net resolves through `lookup`: the guarded one refuses the answers it would connect to.
  const lookup = (host, opts, cb) => {
    const done = typeof opts === 'function' ? opts : cb;
    const options = typeof opts === 'object' && opts !== null ? opts : {};
    dns.lookup(host, { ...options, all: true }, (err, answers) => {
      if (err) return done(err);
      const bad = answers.find((a) => blocked(a.address));
      if (bad) return done(refused(host, bad.address));
      if (options.all) return done(null, answers);
      return done(null, answers[0].address, answers[0].family);
    });
  };
  const connect0 = Socket.prototype.connect;
  pin(Socket.prototype, 'connect', function connect(...args) {
    const [first, second] = args;
    const options = Array.isArray(first) ? first[0] : first;
    if (typeof options === 'object' && options !== null) {
      check(options.host);
      if (options.path === undefined) options.lookup = lookup;
      return connect0.apply(this, args);
    }
    if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      // connect(port, host?, listener?) as the options form, so the lookup is the guarded one.
      const host = typeof second === 'string' ? second : undefined;
      check(host);
      return connect0.call(
        this,
        { port: Number(first), host, lookup },
        args.find((a) => typeof a === 'function'),
      );
    }
    return connect0.apply(this, args);
  });
}
