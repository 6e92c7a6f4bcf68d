// A function's way to the Plinth it runs in (docs/functions.md, "Calling Plinth from a
// function"). Plain JavaScript for Deno: deno-host.js puts the source of plinthBridge into each
// function worker, and the worker's net guard (deno-net-guard.js) asks it about every fetch.
//
// A fetch of a URL of Plinth's own origin (PLINTH_URL, told when the worker is given its code)
// goes over the Unix socket Plinth relays to its HTTP server (src/functions/runtime/bridge.ts),
// not over the network: loopback and the machine's own addresses stay closed to the function.
// Deno checks its net permission on the URL even through a Unix-socket client, so the request
// is sent to the reserved name plinth.invalid, never resolved; Plinth sets the Host header.

/** The bridge of a worker whose socket is `socket` (null: none, e.g. in a standalone runtime). */
export function plinthBridge(socket) {
  let origin = null;
  let client = null;
  return {
    /** Plinth's URL is `url`: from now on fetches of its origin are bridged. */
    open(url) {
      if (!socket) return;
      origin = new URL(url).origin;
      client ??= Deno.createHttpClient({ proxy: { transport: 'unix', path: socket } });
    },
    /** The fetch for `url` when it is Plinth's (it takes fetch's own arguments), else null. */
    route(url) {
      let u;
      try {
        u = new URL(url);
      } catch {
        return null;
      }
      if (origin === null || u.origin !== origin) return null;
      return (fetch0, input, init) => {
        const req = new Request(input, init);
        return fetch0(new Request(`http://plinth.invalid${u.pathname}${u.search}`, req), { client });
      };
    },
  };
}
