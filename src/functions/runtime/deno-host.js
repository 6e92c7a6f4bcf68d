// Plinth function host: one Deno process per warm function, started by HostProcess
// (src/functions/runtime/host-process.ts) for the pool in pool.ts.
// The process itself only manages; the function runs in a Web Worker with narrowed permissions
// (network as the process allows it, i.e. public addresses only via --deny-net; its temp dir;
// its own socket; the socket of Plinth's bridge; nothing else) and that worker serves the calls
// itself, on a Unix socket of its own, so a call never crosses between threads.
// Plain JavaScript so Deno starts it without a type-check or transpile step.
//
// Protocol (HTTP over Unix sockets in the socket dir given as the first argument):
//   control.sock  GET /_plinth/health   200 when the host is up
//                 PUT /_plinth/deploy   JSON {version, code, secrets, plinthUrl?, timeoutMs?}: loads
//                                       the code in a new worker (plinthUrl: where it calls
//                                       Plinth; timeoutMs: the limit of its waitUntil work); 200
//                                       {ok: true, socket} naming the worker's socket, or 422
//                                       {message, kind} when the module fails to load (kind
//                                       'export': it has no entry that is a function; 'threw')
//   <socket>      x-plinth-runtime-deploy: the deploy sent straight to the standby worker (stdout
//                                       names its socket: {level: 'host', message: 'standby <socket>'}),
//                                       taken only while it has no module (else a call: 400)
//   <socket>      any path              one call: x-plinth-runtime-url is the URL the function
//                                       sees; every other x-plinth-runtime-* header is dropped;
//                                       the method, the other headers and the body are the
//                                       function's Request, its Response is the answer. A thrown
//                                       error, or a status outside 200-599, is a 500 with
//                                       x-plinth-runtime-outcome: threw.
// Console output and errors go to stdout as JSON lines {level, message}. Work a function left to
// EdgeRuntime.waitUntil still running at its time limit ends the process, as a call over the
// limit does (the pool starts another on the next call).

import { plinthBridge } from './deno-bridge.js';
import { installForms } from './deno-forms.js';
import { installNetGuard } from './deno-net-guard.js';

// The third argument: what the network guard refuses ({cidrs, addresses}, deno.ts guardSpec());
// the fourth: the socket of Plinth's bridge (src/functions/runtime/bridge.ts), empty for none.
const [socketDir, tmpDir, guardSpec, apiSocket = ''] = Deno.args;
// A replaced worker keeps serving this long for calls already routed to it, then drains.
const RETIRE_GRACE_MS = 2_000;
// ...and is stopped after this long even if calls are still running.
const RETIRE_AFTER_MS = 60_000;

// One log line to stdout, where Plinth reads it. The worker writes its console output with a
// copy of this (see BOOT) before its answer leaves, so a log line never trails its response.
// Stack traces name modules by URL: the function's data: URL (which Deno shortens with
// "......") and the worker bootstrap's blob: URL are shown by short names instead.
const MAX_LOG_CHARS = 8192;
const FUNCTION_URL = /data:text\/javascript;base64,[A-Za-z0-9+/=.]+/g;
const RUNTIME_URL = /blob:null\/[0-9a-f-]+/g;

function emit(level, message) {
  const text = String(message)
    .replace(FUNCTION_URL, 'function.js')
    .replace(RUNTIME_URL, 'plinth-runtime.js')
    .slice(0, MAX_LOG_CHARS);
  const bytes = new TextEncoder().encode(`${JSON.stringify({ level, message: text })}\n`);
  for (let n = 0; n < bytes.length; ) n += Deno.stdout.writeSync(bytes.subarray(n));
}

// The worker bootstrap: replaces Deno.env with the function's secrets (the worker has no env
// permission, so the process env stays unreadable), forwards console output, installs the
// globals of the forms a function may take (deno-forms.js), loads the code, then serves calls
// on its socket.
const BOOT = `
${installNetGuard.toString().replace(/^export /, '')}
${plinthBridge.toString().replace(/^export /, '')}
${installForms.toString().replace(/^export /, '')}
// The fetch of the runtime itself, before the guards wrap it: the worker's call to its own socket.
const ownFetch = globalThis.fetch;
// Before anything else: the IPv6 ranges --deny-net cannot hold (deno-net-guard.js), and the
// fetches of Plinth's own URL sent over its bridge (deno-bridge.js).
const bridge = plinthBridge(${JSON.stringify(apiSocket || null)});
await installNetGuard(${JSON.stringify(JSON.parse(guardSpec))}, bridge);
const MAX_LOG_CHARS = ${MAX_LOG_CHARS};
const FUNCTION_URL = ${FUNCTION_URL};
const RUNTIME_URL = ${RUNTIME_URL};
${emit}
let server = null;
function fmt(args) {
  return args.map((a) => {
    if (typeof a === 'string') return a;
    if (a instanceof Error) return a.stack ?? String(a);
    try { return Deno.inspect(a, { depth: 4, colors: false }); } catch { return String(a); }
  }).join(' ');
}
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  const name = level === 'log' ? 'info' : level === 'trace' ? 'debug' : level;
  console[level] = (...args) => emit(name, fmt(args));
}
const log = console.error;
const forms = installForms({
  error: (message) => emit('error', message),
  overtime: (ms) => {
    emit('error', 'Work passed to EdgeRuntime.waitUntil was still running at the time limit (' + ms + ' ms); the function was stopped.');
    postMessage({ t: 'overtime' });
  },
});
const threw = () => new Response(null, { status: 500, headers: { 'x-plinth-runtime-outcome': 'threw' } });
// The status Deno.serve sends, read through the original getter: a subclass cannot hide it.
const statusOf = Object.getOwnPropertyDescriptor(Response.prototype, 'status').get;
function serve(handler) {
  return async (req, info) => {
    const url = req.headers.get('x-plinth-runtime-url');
    if (!url) return new Response('x-plinth-runtime-url is required', { status: 400 });
    // Appended to the Request's own headers: a Headers given to it is converted again (webidl).
    const call = new Request(url, { method: req.method, body: req.body });
    const headers = call.headers;
    for (const [k, v] of req.headers) if (!k.startsWith('x-plinth-runtime-')) headers.append(k, v);
    try {
      const res = await handler(call, info);
      if (!(res instanceof Response)) throw new TypeError('The function must return a Response (got ' + typeof res + ').');
      // Deno allows 101, which a relay cannot answer a plain request with (the client would hang).
      const status = statusOf.call(res);
      if (status < 200 || status > 599) {
        log('The function returned status ' + status + '; a function must answer with a status from 200 to 599.');
        return threw();
      }
      return res;
    } catch (err) {
      log(err?.stack ?? String(err));
      return threw();
    }
  };
}
// The function's handler once its module is loaded; until then the socket answers 503.
let handler = null;
let listening = null;
// A standby worker listens on its socket before any code arrives and sends itself one call
// without x-plinth-runtime-url (answered 400, no function runs): a deploy then only loads the
// module, and the first real call finds the server's path compiled.
async function listen(path) {
  const up = Promise.withResolvers();
  const call = serve((req, info) => (handler ? handler(req, info) : new Response(null, { status: 503 })));
  const take = (req, info) => (handler === null && req.headers.has(DEPLOY_HEADER) ? direct(req) : call(req, info));
  server = forms.serve({ path, onListen: () => up.resolve(), onError: threw }, take);
  await up.promise;
  postMessage({ t: 'listening' });
  // A deploy waits for the socket, not for the warm-up.
  void warmUp(path);
}
async function warmUp(path) {
  const client = Deno.createHttpClient({ proxy: { transport: 'unix', path } });
  try {
    await (await ownFetch('http://worker.invalid/', { client })).arrayBuffer();
  } catch {
    // Only a warm-up: the first call pays for what it did not do.
  } finally {
    client.close();
  }
}
// A deploy sent straight to a standby's socket: one hop each way, the host told after (standbyMessage).
const DEPLOY_HEADER = 'x-plinth-runtime-deploy';
let taking = false;
async function direct(req) {
  if (taking) return Response.json({ message: 'a deploy is under way' }, { status: 409 });
  taking = true;
  postMessage({ t: 'taking' });
  const m = await req.json();
  const r = await load(m);
  if (!r.ok) {
    postMessage({ t: 'refused' });
    return Response.json(r, { status: 422 });
  }
  postMessage({ t: 'took', version: m.version });
  return Response.json({ ok: true });
}
// Loads a version's module ({code, secrets, plinthUrl, timeoutMs}): {ok: true} once its handler
// serves, or {ok: false, kind, message} (logged) when it failed to load.
async function load(m) {
  if (m.plinthUrl) bridge.open(m.plinthUrl);
  forms.limit(m.timeoutMs);
  // TMPDIR tells the function where it may read and write files; PLINTH_URL (and INSFORGE_BASE_URL,
  // the InsForge SDK's name for it) where it calls Plinth. Secrets of these names win.
  const urls = m.plinthUrl ? { PLINTH_URL: m.plinthUrl, INSFORGE_BASE_URL: m.plinthUrl } : {};
  const secrets = Object.freeze({ TMPDIR: ${JSON.stringify(tmpDir)}, ...urls, ...m.secrets });
  const env = Object.freeze({
    get: (k) => (Object.hasOwn(secrets, k) ? secrets[k] : undefined),
    has: (k) => Object.hasOwn(secrets, k),
    toObject: () => ({ ...secrets }),
    set: () => { throw new Deno.errors.NotCapable('Function environment variables are read-only; set them as secrets.'); },
    delete: () => { throw new Deno.errors.NotCapable('Function environment variables are read-only; set them as secrets.'); },
  });
  Object.defineProperty(Deno, 'env', { value: env, configurable: false, writable: false });
  let entry;
  try {
    const mod = await import('data:text/javascript;base64,' + b64(m.code));
    entry = forms.entry(mod);
    if (entry.problem) return refused('export', entry.problem, entry.problem);
  } catch (err) {
    return refused('threw', String(err?.message ?? err), String(err?.stack ?? err));
  }
  await listening;
  handler = entry.handler;
  return { ok: true };
}
const refused = (kind, message, stack) => (emit('error', stack), { ok: false, kind, message });
${b64}
self.onmessage = async (e) => {
  const m = e.data;
  if (m.t === 'listen') {
    listening = listen(m.socket);
    return;
  }
  if (m.t === 'retire') {
    await server?.shutdown();
    await forms.drain();
    return postMessage({ t: 'retired' });
  }
  if (m.t !== 'init' || taking) return;
  taking = true;
  const r = await load(m);
  postMessage(r.ok ? { t: 'ready' } : { t: 'loadError', kind: r.kind, message: r.message });
};
// Run the request and response machinery once while idle, so the first real call is not
// the one paying for it.
(async () => {
  const req = new Request('http://warm.invalid/', { method: 'POST', headers: [['x', 'y']], body: new Uint8Array(1) });
  await req.arrayBuffer();
  const reader = Response.json({ warm: true }).body.getReader();
  while (!(await reader.read()).done);
  new URL(req.url).searchParams.get('x');
})();
`;
// A blob: URL, not a data: URL: the URL becomes the worker's location, and Deno resolves every
// `new Request(url)` against it. Parsing a 6 KB data: URL on each call cost about 35 µs.
const BOOT_URL = URL.createObjectURL(new Blob([BOOT], { type: 'text/javascript' }));

function b64(text) {
  const bytes = new TextEncoder().encode(text);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// Each worker gets a socket of its own, fixed when it is created (its permissions name it),
// and may open Plinth's bridge socket.
let seq = 0;
function newWorker() {
  const socket = `${socketDir}/w${++seq}.sock`;
  const sockets = apiSocket ? [socket, apiSocket] : [socket];
  const w = new Worker(BOOT_URL, {
    type: 'module',
    deno: {
      permissions: {
        net: 'inherit',
        read: [tmpDir, ...sockets],
        write: [tmpDir, ...sockets],
        env: false,
        run: false,
        ffi: false,
        sys: false,
        import: false,
      },
    },
  });
  w.socket = socket;
  w.postMessage({ t: 'listen', socket });
  w.onmessage = (e) => standbyMessage(w, e.data);
  // An error the function did not catch outside a call (e.g. in a timer): log it and keep
  // the worker, as Deno.serve would keep serving.
  w.onerror = (e) => {
    e.preventDefault();
    emit('error', e.message);
  };
  return w;
}

// The worker serving now, and one started before any code arrives: a cold start (and a code
// change) then only loads the function's module.
let current = null;
let version = null;
let standby = newWorker();

// What a standby worker tells: it listens (Plinth is told where, on stdout: it may send a deploy
// there itself), it took a deploy sent to it straight, or refused one (its module did not load).
function standbyMessage(w, m) {
  if (m.t === 'listening' && standby === w) emit('host', `standby ${w.socket}`);
  else if (m.t === 'taking' && standby === w) standby = null;
  else if (m.t === 'took') serving(w, m.version);
  else if (m.t === 'refused') {
    w.terminate();
    if (!standby) standby = newWorker();
  }
}

// `w` serves `v` from now: the worker it replaces is retired, and the next standby made once `w` has settled in.
function serving(w, v) {
  if (current) retire(current);
  current = w;
  version = v;
  w.onmessage = (e) => {
    // Its work cannot be stopped otherwise; Plinth starts the function again on the next call.
    if (e.data.t === 'overtime' && current === w) Deno.exit(1);
  };
  setTimeout(() => {
    if (current === w && !standby) standby = newWorker();
  }, 1000);
}

// A replaced worker finishes the calls it has (Deno.serve's graceful shutdown), then stops.
function retire(w) {
  const stop = setTimeout(() => w.terminate(), RETIRE_AFTER_MS);
  setTimeout(() => w.postMessage({ t: 'retire' }), RETIRE_GRACE_MS);
  w.onmessage = (e) => {
    if (e.data.t === 'retired' || e.data.t === 'overtime') {
      clearTimeout(stop);
      w.terminate();
    }
  };
}

// A deploy through the control socket (no standby was free, or Plinth did not know of one).
function deploy({ version: v, code, secrets, plinthUrl, timeoutMs }) {
  const w = standby ?? newWorker();
  standby = null;
  return new Promise((resolve) => {
    w.onmessage = (e) => {
      const m = e.data;
      if (m.t === 'ready') {
        serving(w, v);
        resolve({ ok: true, socket: w.socket });
      } else if (m.t === 'loadError') {
        // The version serving now (if any) stays: a refused version changes nothing (the worker logged why).
        w.terminate();
        resolve({ ok: false, kind: m.kind, message: m.message });
      }
    };
    w.postMessage({ t: 'init', code, socket: w.socket, plinthUrl, timeoutMs, secrets });
  });
}

function plain(status, body) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

// Plinth holds our stdin open; when it goes away (even killed), stdin ends and so do we.
(async () => {
  for await (const _ of Deno.stdin.readable);
  Deno.exit(0);
})();

Deno.serve({ path: `${socketDir}/control.sock`, onListen: () => emit('host', 'listening') }, async (req) => {
  const path = new URL(req.url).pathname;
  if (path === '/_plinth/health') return plain(200, { ok: true, version });
  if (path === '/_plinth/deploy' && req.method === 'PUT') {
    const r = await deploy(await req.json());
    return plain(r.ok ? 200 : 422, r);
  }
  return plain(404, { message: 'unknown host path' });
});
