import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity, IdentityResolver } from '../../auth/identity.js';
import { AppError } from '../../errors/index.js';
import { MAX_CACHED_BODY } from '../../storage/cache.js';
import { keyProblem } from '../../storage/keys.js';
import type { StorageService } from '../../storage/service.js';
import type { LaneCall, LaneHandler, LaneKit } from '../front-lane.js';
import { callerKey, countInto, type RateLimiter } from '../limiter.js';
import { JSON_TYPE, MEDIA_TYPE, NOBODY, protocolOf } from './shared.js';
import { originOf } from '../origin.js';
import { errorAnswer } from '../plugins/errors.js';
import { drain } from '../routes/storage/multipart.js';

/** `PUT /api/storage/buckets/<bucket>/objects/<key>`, no query string; a bucket name needs no decoding (storage/keys.ts). */
const PUT_PATH = /^\/api\/storage\/buckets\/([A-Za-z0-9_-]{1,63})\/objects\/([^?]{1,2048})$/;
/** The route pattern of the log line and the metrics: Fastify's route's. */
const ROUTE = '/api/storage/buckets/:bucketName/objects/*';
const MULTIPART = /^multipart\/form-data\b/i;
const LENGTH = /^\d{1,6}$/;

type Headers = Record<string, string | number>;

/** What the lane takes from the app. */
export interface StorageLaneDeps {
  storage: StorageService;
  identity: IdentityResolver;
  publicUrl: string | null;
}

/** A PUT the lane has taken: its bucket, key and declared length, and the caller as far as known. */
interface Put {
  bucket: string;
  key: string;
  length: number;
  identity: Identity;
}

/**
 * A small raw object upload (`PUT /api/storage/buckets/<bucket>/objects/<key>`) answered in the
 * front lane (http/front-lane.ts), as Fastify's route (http/routes/storage/objects.ts) answers
 * it, taken only when that route would do nothing this does not: the caller is known without a
 * verification (`IdentityResolver.known`: the admin key, or a user's token verified before; a
 * user's session is still checked first, as the route's identity hook does), the body has a
 * Content-Length of at most 64 KiB (within
 * MAX_UPLOAD_BYTES), no Transfer-Encoding, no Expect, a media type Fastify parses and not
 * multipart, and the key is valid. It counts in the one rate limiter, stores the object with
 * `StorageService.putObject` (the same access checks: the writer, the owner of the object it
 * replaces) and answers errors through `errorAnswer` after draining the body, as the route's
 * `upload` does. Everything else (the anon key, a first token, no credential, a multipart
 * form, a chunked body, a query string) stays Fastify's. docs/decisions.md, "Small object PUTs
 * in the front lane".
 */
export class StorageLane implements LaneHandler {
  constructor(
    private readonly deps: StorageLaneDeps,
    private readonly limiter: RateLimiter | null,
  ) {}

  answer(req: IncomingMessage, res: ServerResponse, kit: LaneKit): boolean {
    if (req.method !== 'PUT') return false;
    const m = PUT_PATH.exec(req.url ?? '');
    if (m === null) return false;
    const put = this.plain(req, m[1]!, m[2]!);
    if (put === null || !kit.open(req)) return false;
    const call = kit.begin(req, res);
    this.serve(req, res, kit, call, put).catch((err) => {
      // Not an error of the upload (those are answered): the answer itself failed.
      kit.parts.log.error({ err, reqId: call.id }, 'storage lane: the answer failed');
      res.destroy();
    });
    return true;
  }

  /** The PUT, when it is the plain case the lane answers; null leaves it to Fastify. */
  private plain(req: IncomingMessage, bucket: string, raw: string): Put | null {
    const h = req.headers;
    const declared = h['content-length'];
    if (declared === undefined || !LENGTH.test(declared) || h['transfer-encoding'] !== undefined) return null;
    const length = Number(declared);
    if (length > MAX_CACHED_BODY || length > this.deps.storage.maxUploadBytes || h.expect !== undefined) return null;
    const type = h['content-type'];
    if (type !== undefined && (!MEDIA_TYPE.test(type) || MULTIPART.test(type))) return null;
    let key: string;
    try {
      key = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (keyProblem(key) !== null) return null;
    const identity = this.deps.identity.known(h);
    // The anon key is refused by the route (403, after its count): Fastify answers it.
    if (identity === null || (identity.kind !== 'admin' && identity.kind !== 'user')) return null;
    return { bucket, key, length, identity };
  }

  private async serve(req: IncomingMessage, res: ServerResponse, kit: LaneKit, call: LaneCall, put: Put) {
    const headers: Headers = { 'x-request-id': call.id, ...kit.parts.cors.simple(req.headers.origin) };
    let identity: Identity = put.identity;
    let status = 200;
    let body: string;
    try {
      // The route's identity hook: a refused caller is nobody (counted by IP), answered after the count.
      const refused = await this.caller(put.identity);
      if (refused !== null) identity = NOBODY;
      if (refused !== null && !(refused instanceof AppError)) throw refused.err;
      await countInto(this.limiter, callerKey(identity, req.headers, call.ip), headers);
      if (refused !== null) throw refused;
      const base = originOf(req.headers.host ?? '', protocolOf(req), this.deps.publicUrl);
      const obj = await this.deps.storage.putObject({
        bucket: put.bucket,
        key: put.key,
        body: req,
        length: put.length,
        contentType: req.headers['content-type'],
        identity,
        base,
      });
      body = JSON.stringify(obj);
    } catch (err) {
      // The route's `upload`: the rest of the body is drained so that the error reaches the client.
      if (!(await drain(req))) headers.connection = 'close';
      const log = call.log ?? kit.parts.log.child({ reqId: call.id });
      const a = errorAnswer(err, { url: req.url ?? '', id: call.id, log, postgrest: false });
      Object.assign(headers, a.headers);
      status = a.status;
      body = JSON.stringify(a.body);
    }
    headers['content-type'] = JSON_TYPE;
    headers['content-length'] = Buffer.byteLength(body);
    // As Fastify's onResponse: only an answer that went out (a client that broke off the body
    // gets no "request completed", no `api` line and no metrics).
    res.once('finish', () => {
      kit.finish(req, call, { route: ROUTE, status, identity, bytesOut: headers['content-length'] });
    });
    res.writeHead(status, headers);
    res.end(body);
  }

  /**
   * The route's identity hook for a known caller: a user's session is checked. An ended one
   * (an AppError) leaves the caller unknown, counted by IP and answered after the count; any
   * other failure is answered at once, uncounted (`{ err }`), as the hook's `done(err)` is.
   */
  private async caller(identity: Identity): Promise<AppError | { err: unknown } | null> {
    try {
      await this.deps.identity.assertSessionLive(identity);
      return null;
    } catch (err) {
      return err instanceof AppError ? err : { err };
    }
  }
}
