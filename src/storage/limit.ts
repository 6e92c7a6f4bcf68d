import { Transform, type Readable } from 'node:stream';
import { AppError } from '../errors/index.js';

// A body that broke off (the client went away) is the client's failure, not the server's: it
// becomes a 4xx AppError here, where the body enters storage (logged at info, not as a crash).
function endedEarly(cause?: unknown): AppError {
  if (cause instanceof AppError) return cause;
  return new AppError('MALFORMED_REQUEST', { message: 'The upload ended before it was complete.', cause });
}

/**
 * `source` passed through a byte counter that fails with PAYLOAD_TOO_LARGE past `maxBytes`.
 * The source is piped, never destroyed: on failure it is left paused and unpiped, so the
 * caller can still drain it and answer on the same connection. A source that fails or closes
 * before its end (client gone) fails the returned stream with MALFORMED_REQUEST (or the
 * source's own AppError).
 */
export function limitBytes(source: Readable, maxBytes: number): Readable {
  let seen = 0;
  const out = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > maxBytes) {
        cb(new AppError('PAYLOAD_TOO_LARGE', { message: `The upload is larger than the limit of ${maxBytes} bytes.` }));
        return;
      }
      cb(null, chunk);
    },
  });
  // A driver that refused the object before reading (a key too long for the store) never
  // consumes `out`: the source failing later must not become an uncaught error. Consumers
  // that do read still get the error.
  out.on('error', () => {});
  const onError = (err: Error) => out.destroy(endedEarly(err));
  const onClose = () => {
    if (!source.readableEnded) out.destroy(endedEarly(source.errored));
  };
  if (source.destroyed && !source.readableEnded) {
    // Already gone (e.g. a multipart form failed while the store was starting).
    process.nextTick(() => out.destroy(endedEarly(source.errored)));
    return out;
  }
  source.on('error', onError);
  source.on('close', onClose);
  out.on('close', () => {
    source.off('error', onError);
    source.off('close', onClose);
    source.unpipe(out);
  });
  source.pipe(out);
  return out;
}
