// The clock of one upstream call: a timeout that restarts per stream chunk, the caller's own
// abort, and which of the two ended the call.
import { AppError } from '../errors/index.js';

/** The caller went away (its signal aborted) before the upstream call finished. */
export class ClientGoneError extends Error {
  constructor() {
    super('client closed the request');
    this.name = 'ClientGoneError';
  }
}

/** Aborts a fetch on timeout or when the caller's signal aborts, and remembers which one. */
export class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  timedOut = false;

  constructor(
    private readonly ms: number,
    private readonly caller: AbortSignal,
  ) {
    if (caller.aborted) this.controller.abort();
    else caller.addEventListener('abort', this.onCaller, { once: true });
    this.restart();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private readonly onCaller = () => this.controller.abort();

  /** Starts the clock again (a stream chunk arrived). */
  restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, this.ms);
  }

  /** Stops the clock while the consumer, not the upstream, is the one to wait for. */
  pause(): void {
    clearTimeout(this.timer);
  }

  /** Stops the clock; the connection goes back to the keep-alive pool. */
  finish(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCaller);
  }

  /** Stops the clock and closes the upstream connection (an answer left unread). */
  cancel(): void {
    this.finish();
    if (!this.controller.signal.aborted) this.controller.abort();
  }

  /** Turns a failure of fetch or of reading the body into Plinth's error. */
  translate(err: unknown, during: 'connect' | 'read'): Error {
    if (err instanceof AppError || err instanceof ClientGoneError) return err;
    if (this.caller.aborted) return new ClientGoneError();
    if (this.timedOut) {
      return new AppError('AI_UPSTREAM_TIMEOUT', {
        message:
          during === 'connect'
            ? 'The AI provider did not answer in time.'
            : 'The AI provider stopped sending in the middle of the answer.',
        cause: err,
      });
    }
    return new AppError('AI_UPSTREAM_ERROR', {
      message:
        during === 'connect'
          ? 'The AI provider could not be reached.'
          : 'The connection to the AI provider broke in the middle of the answer.',
      cause: err,
    });
  }
}
