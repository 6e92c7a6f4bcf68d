import { Writable } from 'node:stream';
import { expect } from 'vitest';
import type { TestApp } from './app.js';

/** A stream for a pino logger that collects the JSON lines written to it. */
export function jsonLines(): { stream: Writable; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { stream, lines };
}

/**
 * A request's line in the log store (source api), without its duration (checked to be a number),
 * or null when none is stored within `waitMs` (a line recorded when the answer finishes may
 * land a moment after the client has read it).
 */
export async function storedApiLine(t: TestApp, requestId: string, waitMs = 0) {
  const until = Date.now() + waitMs;
  for (;;) {
    const page = await t.deps.logs.read({ sources: ['api'], limit: 1000 });
    const line = page.logs.find((l) => l.body.requestId === requestId);
    if (line) {
      const { durationMs, ...body } = line.body;
      expect(typeof durationMs).toBe('number');
      return { level: line.level, message: line.eventMessage, body };
    }
    if (Date.now() >= until) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
}
