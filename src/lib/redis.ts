import type { Redis } from 'ioredis';

/**
 * Redis for counters (and realtime's adapter). Down later: ioredis reconnects by itself;
 * meanwhile commands fail at once (no offline queue), rate limits fail open and health
 * reports it. Not an unhandled error event. Not reachable at start: the client is closed
 * (ioredis would go on reconnecting in the background) and the socket's own error is thrown
 * (ECONNREFUSED, ENOTFOUND … with the address), not ioredis's "Connection is closed".
 * ioredis is imported here, so a start without REDIS_URL does not load it.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  let lastError: unknown = null;
  r.on('error', (err) => {
    lastError = err;
  });
  try {
    await r.connect();
  } catch (err) {
    r.disconnect();
    throw lastError ?? err;
  }
  return r;
}
