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

/**
 * The whole of a small body (a declared length), read straight from `source` without a stream
 * in between, with limitBytes's answers: PAYLOAD_TOO_LARGE past `maxBytes` (the source then
 * left paused, for the caller to drain), MALFORMED_REQUEST for a source that ends early. The
 * bytes are copied once, so a kept body holds none of the socket's larger buffers.
 */
export function readWhole(source: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (source.readableEnded) return resolve(Buffer.alloc(0));
    if (source.destroyed) return reject(endedEarly(source.errored));
    const chunks: Buffer[] = [];
    let seen = 0;
    const settle = (err: AppError | null) => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
      if (err) {
        source.pause();
        reject(err);
      } else resolve(Buffer.concat(chunks, seen));
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes)
        settle(
          new AppError('PAYLOAD_TOO_LARGE', { message: `The upload is larger than the limit of ${maxBytes} bytes.` }),
        );
      else chunks.push(chunk);
    };
    const onEnd = () => settle(null);
    const onError = (err: Error) => settle(endedEarly(err));
    const onClose = () => {
      if (!source.readableEnded) settle(endedEarly(source.errored));
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onError);
    source.on('close', onClose);
  });
}
