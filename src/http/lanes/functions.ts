import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished, type Readable } from 'node:stream';
import type { Deps } from '../../deps.js';
import type { InvokeResponse } from '../../functions/runtime/types.js';
import type { LaneCall, LaneHandler, LaneKit } from '../front-lane.js';
import { callHeaders, hasBody, openCaller } from '../function-call.js';
import { callerKey, countInto, type RateLimiter } from '../limiter.js';
import { JSON_TYPE, MEDIA_TYPE, protocolOf } from './shared.js';
import { originOf } from '../origin.js';
import { errorAnswer } from '../plugins/errors.js';
import { enforce } from '../plugins/identity.js';
import { AppError } from '../../errors/index.js';
import type { Identity } from '../../auth/identity.js';

/** `/functions/<slug>`, maybe with a query string: a slug needs no decoding and no router (functions/slug.ts). */
const CALL = /^\/functions\/([a-z0-9][a-z0-9_-]{0,62})(?:\?|$)/;
/** The methods of Fastify's route; HEAD and OPTIONS stay Fastify's (its HEAD route, the CORS preflight). */
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** The route pattern of the log line and the metrics: Fastify's route's. */
const ROUTE = '/functions/:slug';
/** `POST /api/functions/<slug>`: the same call, as a caller who must send a credential (access `any`). */
const API_CALL = /^\/api\/functions\/([a-z0-9][a-z0-9_-]{0,62})(?:\?|$)/;
const API_ROUTE = '/api/functions/:slug';
const OCTET = 'application/octet-stream';

type Headers = Record<string, string | string[] | number>;
type LaneLog = LaneKit['parts']['log'];

/**
 * A function call (`GET`/`POST`/`PUT`/`PATCH`/`DELETE /functions/<slug>`, and `POST
 * /api/functions/<slug>`) answered in the front lane, as Fastify's routes
 * (http/routes/functions/invoke.ts) answer it: counted in the same rate limiter (by IP, as
 * Fastify counts an open route; the API route by its caller, resolved first, its access
 * enforced as the identity plugin does), the caller from the credential sent along
 * (`openCaller`), the same headers and body to the function, its answer sent as Fastify sends
 * it, and every error as the error handler's envelope. What it cannot answer exactly as Fastify
 * does (HEAD, OPTIONS, a sub-path, a trailing slash, a percent-encoded or non-slug path, a
 * request body of a media type Fastify refuses, TRUST_PROXY, a drain under way) it leaves to Fastify.
 */
export class FunctionLane implements LaneHandler {
  constructor(
    private readonly deps: Pick<Deps, 'functions' | 'identity'> & { publicUrl: string | null },
    private readonly limiter: RateLimiter | null,
  ) {}

  answer(req: IncomingMessage, res: ServerResponse, kit: LaneKit): boolean {
    const url = req.url ?? '';
    const api = url.startsWith('/api/functions/');
    if (!api && !url.startsWith('/functions/')) return false;
    const slug = (api ? API_CALL : CALL).exec(url)?.[1];
    const method = req.method ?? '';
    if (slug === undefined || !(api ? method === 'POST' : METHODS.has(method))) return false;
    if (!readable(req) || !kit.open(req)) return false;
    const call = kit.begin(req, res);
    const headers: Headers = { 'x-request-id': call.id, ...kit.parts.cors.simple(req.headers.origin) };
    // The caller of POST /api/functions/<slug> once resolved: its api line names it, as Fastify's does.
    const caller: Caller = {};
    res.once('finish', () => {
      const route = api ? API_ROUTE : ROUTE;
      kit.finish(req, call, {
        route,
        status: res.statusCode,
        identity: caller.identity,
        bytesOut: headers['content-length'],
      });
    });
    // The request's logger for an error's line: Fastify's (reqId bound), made only when one is written.
    let errorLog: LaneLog | null = call.log;
    const log = () => (errorLog ??= kit.parts.log.child({ reqId: call.id }));
    this.run(req, res, slug, headers, call, log, api ? caller : null).catch((err: unknown) =>
      fail(res, log(), call.id, headers, err),
    );
    return true;
  }

  private async run(
    req: IncomingMessage,
    res: ServerResponse,
    slug: string,
    headers: Headers,
    call: LaneCall,
    log: () => LaneLog,
    caller: Caller | null,
  ): Promise<void> {
    let identity: Identity;
    if (caller) identity = await this.resolved(req, headers, call.ip, caller);
    else {
      // An open route resolves no identity before its count: Fastify counts it by IP too.
      await countInto(this.limiter, callerKey(undefined, req.headers, call.ip), headers);
      identity = await openCaller(this.deps.identity, req.headers);
    }
    const base = originOf(req.headers.host ?? '', protocolOf(req), this.deps.publicUrl);
    const answer = await this.deps.functions.invoke(
      slug,
      {
        method: req.method ?? 'GET',
        url: base + req.url,
        headers: callHeaders(req.headers, identity),
        // The body is streamed to the function as it arrives, never buffered here.
        body: hasBody(req.method, req.headers) ? req : null,
      },
      call.id,
    );
    return send(req, res, answer, headers, log);
  }

  /**
   * The caller of an `any` route, as Fastify's identity hooks find it (plugins/identity.ts):
   * resolved before the count, which keys on it; a bad credential refused after the count,
   * then the route's access enforced.
   */
  private async resolved(req: IncomingMessage, headers: Headers, ip: string | undefined, caller: Caller) {
    let failure: AppError | null = null;
    try {
      caller.identity = await this.deps.identity.resolve(req.headers, { deferSessionCheck: false });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      failure = err;
    }
    await countInto(this.limiter, callerKey(caller.identity, req.headers, ip), headers);
    if (failure || !caller.identity) throw failure;
    enforce('any', caller.identity, { functionToken: false });
    return caller.identity;
  }
}

/** Who called, once the lane has resolved it (only POST /api/functions/<slug> does before the answer). */
interface Caller {
  identity?: Identity;
}

/** Whether Fastify would hand the request's body to the route as it is: none, or one of a media type it parses. */
function readable(req: IncomingMessage): boolean {
  if (req.method === 'GET') return true;
  const type = req.headers['content-type'];
  return type === undefined || MEDIA_TYPE.test(type);
}

/**
 * Sends a function's answer as Fastify's `reply.headers(...).send(body)` does: its headers over
 * the lane's, no body nor `content-type`/`content-length` on a 204, a Buffer with its length and
 * `application/octet-stream` when it has no media type, a stream piped (the client's close
 * destroys it, which cuts the call; its failure before the first byte is the error envelope).
 */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  answer: InvokeResponse,
  lane: Headers,
  log: () => LaneLog,
): Promise<void> | undefined {
  const headers: Headers = Object.assign(lane, answer.headers);
  const body = answer.body;
  if (answer.status === 204) {
    delete headers['content-type'];
    delete headers['content-length'];
    res.writeHead(204, headers);
    res.end();
    if (!Buffer.isBuffer(body)) body.on('error', () => {}).resume();
    return;
  }
  if (Buffer.isBuffer(body)) {
    const type = headers['content-type'];
    if (typeof type !== 'string' || !MEDIA_TYPE.test(type)) headers['content-type'] = OCTET;
    const length = headers['content-length'];
    if (!length || Number(length) !== body.length) headers['content-length'] = String(body.length);
    res.writeHead(answer.status, headers);
    res.end(body);
    return;
  }
  res.statusCode = answer.status;
  for (const k in headers) res.setHeader(k, headers[k]!);
  return pipe(req, res, body, log);
}

/**
 * Pipes a function's streamed body, as Fastify's sendStream: settles when the body has ended;
 * fails (the error envelope follows) when the body fails before the answer's head went out;
 * else cuts the answer, with Fastify's log line for it.
 */
function pipe(req: IncomingMessage, res: ServerResponse, body: Readable, log: () => LaneLog): Promise<void> {
  return new Promise((resolve, reject) => {
    let open = true;
    finished(body, { readable: true, writable: false }, (err) => {
      open = false;
      if (!err) return resolve();
      if (!res.headersSent && !req.aborted) return reject(err);
      if ((err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE')
        log().info({ res: { statusCode: res.statusCode } }, 'stream closed prematurely');
      else log().warn({ err }, 'response terminated with an error with headers already sent');
      res.destroy();
      resolve();
    });
    // The client went away: the body is destroyed, which cuts the call (functions/runtime/response-stream.ts).
    finished(res, () => {
      if (open) body.destroy();
    });
    body.pipe(res);
  });
}

/** Answers a failure with the error handler's envelope (and its log line), or cuts an answer already under way. */
function fail(res: ServerResponse, log: LaneLog, id: string, headers: Headers, err: unknown): void {
  try {
    // A client gone before the answer still gets its log line (Fastify's error handler writes one too).
    if (res.headersSent) return void res.destroy();
    const a = errorAnswer(err, { url: '', id, log, postgrest: false });
    const body = JSON.stringify(a.body);
    // Fastify's error handler keeps the headers set so far, all but the body's own.
    res.removeHeader('content-type');
    res.removeHeader('content-length');
    Object.assign(headers, a.headers, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
    res.writeHead(a.status, headers);
    res.end(body);
  } catch (e) {
    log.error({ err: e }, 'unhandled error');
    res.destroy();
  }
}
