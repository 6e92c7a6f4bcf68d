import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity, IdentityResolver } from '../../auth/identity.js';
import { IDENT } from '../../database/ident.js';
import { contentRange } from '../../database/prefer.js';
import { cachedRead, type ReadPlan } from '../../database/read-cache.js';
import type { ReadOptions, RecordsService } from '../../database/records.js';
import type { LaneCall, LaneHandler, LaneKit } from '../front-lane.js';
import { callerKey, countInto, type RateLimiter } from '../limiter.js';
import { JSON_TYPE } from './shared.js';
import { errorAnswer } from '../plugins/errors.js';
import { sessionFirst } from '../plugins/identity.js';

const PREFIX = '/api/db/';
const ROUTE = '/api/db/:table';
/** The Accept headers that mean plain JSON (database/media.ts `parseAccept`); any other is Fastify's. */
const PLAIN_ACCEPT = new Set([undefined, '', '*/*', 'application/json']);
/** Headers that change a read's answer beyond the lane's: Fastify answers any request with one. */
const NOT_HERE = ['prefer', 'range', 'range-unit', 'content-length', 'transfer-encoding'];

type Headers = Record<string, string | number>;

/**
 * `GET /api/db/<table>` with plain JSON and no Prefer or Range header, in the front
 * lane (http/front-lane.ts), taken only when Fastify's route (routes/database/records.ts) would
 * do nothing this does not: the caller is known without a verification (`IdentityResolver.known`:
 * a key, or a token verified before; the session is still checked, in the read's transaction as
 * on the route), and the query string's shape is compiled for the schema's current version
 * (read-cache.ts `cachedRead`; a value its column refuses is left to Fastify too). It counts in
 * the one rate limiter, runs the read with `RecordsService.run` and answers errors through the
 * route's own steps (`sessionFirst`, `errorAnswer`). docs/decisions.md, "Records reads in the
 * front lane".
 */
export class RecordsLane implements LaneHandler {
  constructor(
    private readonly records: RecordsService,
    private readonly resolver: IdentityResolver,
    private readonly limiter: RateLimiter | null,
  ) {}

  answer(req: IncomingMessage, res: ServerResponse, kit: LaneKit): boolean {
    const url = req.url ?? '';
    if (req.method !== 'GET' || !url.startsWith(PREFIX)) return false;
    const q = url.indexOf('?');
    const table = q < 0 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, q);
    const h = req.headers;
    if (!IDENT.test(table) || !PLAIN_ACCEPT.has(h.accept) || NOT_HERE.some((name) => h[name] !== undefined)) {
      return false;
    }
    // Several exposed schemas: the answer names its schema (Content-Profile), which this does
    // not; with one, an Accept-Profile naming it (postgrest-js sends one) changes nothing.
    const exposed = this.records.exposedSchemas;
    const profile = h['accept-profile'];
    if (exposed.length !== 1 || (profile !== undefined && profile !== exposed[0]) || !kit.open(req)) return false;
    const identity = this.resolver.known(h);
    if (identity === null) return false;
    const opts: ReadOptions = { format: 'json', count: 'none', schema: exposed[0] };
    let plan: ReadPlan | null;
    try {
      const version = this.records.scopes.get(opts.schema).schema.version;
      plan = cachedRead(this.records.reads, version, table, q < 0 ? '' : url.slice(q + 1), opts);
    } catch {
      return false; // a value its column refuses: the route answers it (after the count and the session)
    }
    if (plan === null) return false;
    const call = kit.begin(req, res);
    this.serve(req, res, kit, call, { identity, plan, opts }).catch((err) => {
      // Not an error of the read (those are answered): the answer itself failed.
      kit.parts.log.error({ err, reqId: call.id }, 'records lane: the answer failed');
      res.destroy();
    });
    return true;
  }

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    kit: LaneKit,
    call: LaneCall,
    read: { identity: Identity; plan: ReadPlan; opts: ReadOptions },
  ): Promise<void> {
    const headers: Headers = { 'x-request-id': call.id, ...kit.parts.cors.simple(req.headers.origin) };
    let status = 200;
    let body: string;
    try {
      await countInto(this.limiter, callerKey(read.identity, req.headers, call.ip), headers);
      const page = await this.records.run(read.identity, read.plan, read.opts);
      headers['content-range'] = contentRange(page.offset, page.count, null);
      body = page.body;
    } catch (err) {
      const log = call.log ?? kit.parts.log.child({ reqId: call.id });
      const failure = await sessionFirst(this.resolver, read.identity, err);
      const a = errorAnswer(failure, { url: req.url ?? '', id: call.id, log, postgrest: true });
      Object.assign(headers, a.headers);
      status = a.status;
      body = JSON.stringify(a.body);
    }
    headers['content-type'] = JSON_TYPE;
    headers['content-length'] = Buffer.byteLength(body);
    res.writeHead(status, headers);
    res.end(body);
    kit.finish(req, call, { route: ROUTE, status, identity: read.identity, bytesOut: headers['content-length'] });
  }
}
