import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { AppError } from '../../errors/index.js';
import { bodyCut, functionFault, HostUnreachable, outcomeError, timeoutError } from './faults.js';
import { ResponseStream } from './response-stream.js';
import { dropHopByHop, MAX_RESPONSE_HEADER_BYTES, type HostTarget } from './transport.js';
import type { InvokeRequest, InvokeResponse, RuntimeFunction } from './types.js';

const INVOKE_PATH = '/_plinth/invoke';

/** A body of known length up to this size is read whole before the call resolves. */
const SMALL_BODY = 64 * 1024;

/** How a call is sent, and who is told about its failures. */
export interface SendOptions {
  timeoutMs: number;
  /** The call ran over its time: stop the runaway function. */
  onTimeout: () => void;
  /** Writes a line to the function's logs (a fault of the function that the relay found). */
  log?: (message: string) => void;
  /**
   * The host cut the response after its status and headers (its body failed, or the host
   * died): resolves with the error to report, an AppError. Default: the runtime's fault.
   */
  blameCut?: (cause: Error) => Promise<AppError>;
}

/**
 * Sends one invocation to a host and resolves with the function's response, streamed.
 * The wall-time limit covers the whole call: before the response starts it is a 504;
 * once streaming, the stream is cut. Either way `onTimeout` stops the runaway function.
 * A status outside 200-599 or oversized headers are the function's fault (FUNCTION_ERROR);
 * a 1xx is never relayed.
 */
export function sendToHost(
  target: HostTarget,
  fn: RuntimeFunction,
  req: InvokeRequest,
  opts: SendOptions,
): Promise<InvokeResponse> {
  return new Promise((resolve, reject) => {
    const headers = dropHopByHop(req.headers, target.extraHeaders);
    // Node already answered any "Expect: 100-continue", and undici refuses to send it on.
    if (headers.expect !== undefined) delete headers.expect;
    headers['x-plinth-runtime-version'] = fn.version;
    headers['x-plinth-runtime-url'] = req.url;
    target.dispatcher.dispatch(
      {
        method: req.method,
        path: target.pathPrefix === undefined ? INVOKE_PATH : `${target.pathPrefix}${INVOKE_PATH}`,
        headers,
        body: req.body,
        // The wall-time limit of the call covers it whole, streaming included.
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      new HostCall(req, opts, { resolve, reject }),
    );
  });
}

/** One invocation in flight: undici's events for it, turned into its outcome. */
class HostCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private timedOut = false;
  private head: Omit<InvokeResponse, 'body'> | null = null;
  /** A small body, read whole. */
  private chunks: Buffer[] | null = null;
  /** Any other body, streamed. */
  private stream: ResponseStream | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly req: InvokeRequest,
    private readonly opts: SendOptions,
    private readonly outcome: { resolve: (res: InvokeResponse) => void; reject: (err: Error) => void },
  ) {
    this.timer = setTimeout(() => this.timeOut(), opts.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(new Error('function timed out'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    const outcome = headers['x-plinth-runtime-outcome'];
    if (outcome) {
      // The host answered for the function; its body is drained and dropped.
      clearTimeout(this.timer);
      return this.settle(outcomeError(String(outcome), this.opts.timeoutMs));
    }
    if (status < 200 || status > 599) {
      clearTimeout(this.timer);
      this.settle(
        functionFault(
          `The function returned status ${status}; a function must answer with a status from 200 to 599.`,
          this.opts.log,
        ),
      );
      // The connection is in no state to carry another call.
      return controller.abort(new Error(`status ${status}`));
    }
    this.head = { status, headers: dropHopByHop(headers) };
    // A small body of known length is read whole: sending a Buffer costs the API server
    // less than piping a stream.
    if (Number(headers['content-length'] ?? NaN) <= SMALL_BODY) {
      this.chunks = [];
      return;
    }
    this.stream = new ResponseStream(controller, () => clearTimeout(this.timer));
    this.settle(null, { ...this.head, body: this.stream });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.chunks) this.chunks.push(chunk);
    else this.stream?.feed(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.timer);
    const { chunks, head } = this;
    if (chunks && head) this.settle(null, { ...head, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
    else this.stream?.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    clearTimeout(this.timer);
    if (this.timedOut) return void this.stream?.destroy(timeoutError(this.opts.timeoutMs));
    // The client went away and its side closed the stream: nothing is left to tell.
    if (this.stream?.destroyed) return;
    if (bodyCut(this.req))
      return this.fail(
        new AppError('MALFORMED_REQUEST', { message: 'The request body ended before it was complete.' }),
      );
    if ((err as { code?: string }).code === 'UND_ERR_HEADERS_OVERFLOW') {
      return this.settle(
        functionFault(
          `The function's response headers are larger than ${MAX_RESPONSE_HEADER_BYTES / 1024} KiB.`,
          this.opts.log,
        ),
      );
    }
    if (!this.head) return this.settle(new HostUnreachable(err));
    // The host cut the response after its head: the function's body failed, or the host died.
    const blame =
      this.opts.blameCut?.(err) ??
      Promise.resolve(
        new AppError('FUNCTION_RUNTIME_UNAVAILABLE', { message: 'The function runtime cut the response.' }),
      );
    void blame.then((e) => this.fail(e));
  }

  /** The call ran over its time: stops the function, and cuts the call where it is. */
  private timeOut(): void {
    this.timedOut = true;
    this.opts.onTimeout();
    this.settle(timeoutError(this.opts.timeoutMs));
    this.controller?.abort(new Error('function timed out'));
  }

  /** Fails the call: rejects it if it has not resolved yet, and cuts its body if it is streaming. */
  private fail(err: Error): void {
    this.settle(err);
    this.stream?.destroy(err);
  }

  private settle(fail: Error | null, res?: InvokeResponse): void {
    if (this.settled) return;
    this.settled = true;
    if (fail) this.outcome.reject(fail);
    else this.outcome.resolve(res!);
  }
}
