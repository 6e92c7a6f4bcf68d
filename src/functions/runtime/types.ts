import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

/** A function as the runtime sees it: an id, a version (code + secrets) and how to load it. */
export interface RuntimeFunction {
  id: string;
  /** Changes whenever the code or a secret changes; the warm worker is replaced then. */
  version: string;
  /** The compiled JavaScript and the secrets it may read; called only when (re)deploying. */
  load(): Promise<{ code: string; secrets: Record<string, string> }>;
  /**
   * A version loaded to check a save before it was stored, with the same code and secrets:
   * when it is the one loaded, it is taken over under `version` instead of loaded again.
   */
  adopts?: string;
}

/** The request handed to a function, unchanged from what the client sent. */
export interface InvokeRequest {
  method: string;
  /** Absolute URL the function sees as `req.url`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Readable | null;
}

export interface InvokeResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /** Small bodies of known length arrive whole; others stream. */
  body: Readable | Buffer;
  /** The version was loaded for this call (a cold start), for the log and metrics. */
  cold?: boolean;
}

/** Receives one line of a function's console output. */
export type LogSink = (functionId: string, level: string, message: string) => void;

/** Where functions run: the local Deno pool, or a remote runtime (FUNCTION_RUNTIME_URL). */
export interface FunctionRuntime {
  invoke(fn: RuntimeFunction, req: InvokeRequest): Promise<InvokeResponse>;
  /** Starts what a quick first call needs, in the background. */
  warm(): void;
  /** Loads a function version ahead of its first call, in the background (errors show on that call). */
  prepare(fn: RuntimeFunction): void;
  /**
   * Loads a function version now. INVALID_FUNCTION_CODE when the module's entry (forms.ts) is
   * not a function (the version loaded before, if any, keeps serving); other failures as on
   * invoke.
   */
  load(fn: RuntimeFunction): Promise<void>;
  /** Drops what is loaded for a function that no longer exists (a check of a create that failed). */
  discard(functionId: string): void;
  /** Plinth's HTTP server listens at `address`: where the local runtime's bridge relays functions' calls to Plinth. */
  listening?(address: AddressInfo | string): void;
  /** Throws when the runtime cannot run functions (health check). */
  check(): Promise<void>;
  close(): Promise<void>;
}
