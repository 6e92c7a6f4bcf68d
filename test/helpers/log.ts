import { Writable } from 'node:stream';

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
