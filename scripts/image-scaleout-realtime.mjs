// Realtime across replicas (scripts/image-scaleout.sh): a socket.io subscriber connected to
// replica B receives the INSERT of a row written through replica A. Prints one
// "image-scaleout: …" line with the time from the insert request to B's event; exits non-zero
// with the reason otherwise. Uses socket.io-client from the repository's node_modules.
//   node scripts/image-scaleout-realtime.mjs <url of A> <url of B> <admin key> <table>
import { io } from 'socket.io-client';

const [urlA, urlB, adminKey, table] = process.argv.slice(2);
const WAIT_MS = 10_000;

function fail(message) {
  console.error(`image-scaleout: FAILED: ${message}`);
  process.exit(1);
}

const socket = io(urlB, { transports: ['websocket'], auth: { token: adminKey }, reconnection: false, forceNew: true });
const timer = setTimeout(() => fail(`no INSERT event on B within ${WAIT_MS} ms`), WAIT_MS);
try {
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', (err) => reject(new Error(`connect to B: ${err.message}`)));
  });
  const channel = `table:${table}`;
  const ack = await socket.timeout(WAIT_MS).emitWithAck('realtime:subscribe', { channel });
  if (!ack?.ok) fail(`subscribe to ${channel} on B: ${JSON.stringify(ack)}`);
  const body = `realtime ${Date.now()}`;
  const event = new Promise((resolve) => {
    socket.on('INSERT', (msg) => {
      if (msg?.record?.body === body) resolve(msg);
    });
  });
  const sent = performance.now();
  const res = await fetch(`${urlA}/api/database/records/${table}`, {
    method: 'POST',
    headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
    body: JSON.stringify([{ body }]),
  });
  if (!res.ok) fail(`insert through A: ${res.status} ${await res.text()}`);
  const msg = await event;
  const ms = Math.round(performance.now() - sent);
  console.log(
    `image-scaleout: a row inserted through A reached a subscriber on B in ${ms} ms (${msg.meta.channel}, ${msg.type})`,
  );
} catch (err) {
  fail(err.message);
} finally {
  clearTimeout(timer);
  socket.close();
}
