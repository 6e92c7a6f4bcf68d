import { Transform, type Readable } from 'node:stream';
import { AppError } from '../errors/index.js';

/**
 * `source` passed through a byte counter that fails with PAYLOAD_TOO_LARGE past `maxBytes`.
 * The source is piped, never destroyed: on failure it is left paused and unpiped, so the
 * caller can still drain it and answer on the same connection. A source that closes before
 * its end (client gone) fails the returned stream too.
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
  const onError = (err: Error) => out.destroy(err);
  const onClose = () => {
    if (!source.readableEnded) out.destroy(new Error('The upload ended before it was complete.'));
  };
  if (source.destroyed && !source.readableEnded) {
    // Already gone (e.g. a multipart form failed while the store was starting).
    process.nextTick(() => out.destroy(source.errored ?? new Error('The upload ended before it was complete.')));
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
