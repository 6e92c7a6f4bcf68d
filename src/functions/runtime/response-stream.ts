import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/**
 * A function's response body streamed from its host as it arrives: the host is paused while
 * the reader is behind and resumed when it reads; destroying the stream before its end aborts
 * the call (the client went away, or the call failed).
 */
export class ResponseStream extends Readable {
  constructor(
    private readonly controller: Dispatcher.DispatchController,
    /** Told when the stream is done with, however it ends. */
    private readonly onClose: () => void,
  ) {
    super();
  }

  /** One chunk from the host. */
  feed(chunk: Buffer): void {
    if (!this.push(chunk)) this.controller.pause();
  }

  /** The host sent the whole body. */
  finish(): void {
    this.push(null);
  }

  override _read(): void {
    this.controller.resume();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.onClose();
    if (!this.controller.aborted && !this.readableEnded) this.controller.abort(err ?? new Error('response closed'));
    cb(err);
  }
}
