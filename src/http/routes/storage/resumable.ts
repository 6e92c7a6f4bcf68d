import type { Server } from '@tus/server';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Identity } from '../../../auth/identity.js';
import type { ResumableUploads } from '../../../storage/resumable.js';
import { AppError, type ErrorBody, type ErrorCode } from '../../../errors/index.js';
import type { RoutePlugin } from '../../types.js';
import { drain } from './multipart.js';
import { baseUrl } from './url.js';

export const RESUMABLE_PATH = '/api/storage/upload/resumable';

interface Caller {
  identity: Identity;
  base: string;
  log: FastifyBaseLogger;
}

type Tus = typeof import('@tus/server');
let tusLibrary: Promise<Tus> | null = null;
/** `@tus/server`, imported on the first resumable request: a start does not load it (issue #38). */
const loadTus = (): Promise<Tus> => {
  tusLibrary ??= import('@tus/server').catch((err) => {
    tusLibrary = null;
    throw err;
  });
  return tusLibrary;
};

/** tus's own errors (by identity, never by text) as catalogue codes. */
const tusCodes = ({ ERRORS }: Tus) =>
  new Map<unknown, ErrorCode>([
    [ERRORS.INVALID_OFFSET, 'UPLOAD_OFFSET_MISMATCH'],
    [ERRORS.ERR_SIZE_EXCEEDED, 'UPLOAD_TOO_LONG'],
    [ERRORS.ERR_MAX_SIZE_EXCEEDED, 'PAYLOAD_TOO_LARGE'],
    [ERRORS.FILE_NOT_FOUND, 'RESUMABLE_UPLOAD_NOT_FOUND'],
    [ERRORS.FILE_NO_LONGER_EXISTS, 'RESUMABLE_UPLOAD_NOT_FOUND'],
  ]);

const count = (v: string) => {
  const n = Number(v);
  return Number.isInteger(n) && String(n) === v && n >= 0;
};
/** The header rules tus checks first (and answers in plain text): checked here, for the envelope. */
const headerRules = ({ Metadata }: Tus): Record<string, (v: string) => boolean> => ({
  'upload-offset': count,
  'upload-length': count,
  'upload-defer-length': (v) => v === '1',
  'upload-metadata': (v) => {
    try {
      Metadata.parse(v);
      return true;
    } catch {
      return false;
    }
  },
  'x-forwarded-proto': (v) => v === 'http' || v === 'https',
  'tus-version': (v) => v === '1.0.0',
  'upload-concat': (v) => v === 'partial' || v.startsWith('final;'),
});

/** Refuses, in the envelope, what tus would refuse in plain text before its handlers. */
function assertTusHeaders(request: FastifyRequest, rules: Record<string, (v: string) => boolean>): void {
  if (request.method === 'OPTIONS') return;
  if (request.headers['tus-resumable'] !== '1.0.0')
    throw new AppError('TUS_VERSION_UNSUPPORTED', { headers: { 'tus-version': '1.0.0' } });
  const bad = Object.entries(request.headers).filter(([name, value]) => {
    if (name === 'content-type') return request.method === 'PATCH' && value !== 'application/offset+octet-stream';
    const rule = rules[name];
    return rule !== undefined && (typeof value !== 'string' || !rule(value));
  });
  if (bad.length) {
    throw new AppError('INVALID_INPUT', {
      message: `Invalid ${bad.map(([n]) => n).join(', ')} header.`,
      nextActions:
        'Send tus 1.0.0 headers: Upload-Offset and Upload-Length as whole numbers, Upload-Metadata as "key base64,...", PATCH bodies as application/offset+octet-stream.',
    });
  }
}

/** An AppError as tus hooks throw errors: status and body (the envelope). */
async function hook<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw { status_code: err.status, body: JSON.stringify(err.toBody()) };
    throw err;
  }
}

/** Any error tus answers, as the envelope; 5xx causes go to the log only. */
function envelope(
  err: Error | { status_code: number; body: string },
  log: FastifyBaseLogger | undefined,
  codes: Map<unknown, ErrorCode>,
): { status_code: number; body: string } {
  const status = 'status_code' in err ? err.status_code : 500;
  const body = 'body' in err ? err.body : '';
  if (body.startsWith('{')) return { status_code: status, body }; // already ours (a hook's AppError)
  const code = codes.get(err);
  if (code) {
    const e = new AppError(code);
    // 410 for an expired upload, as tus asks; the envelope keeps its status in step.
    return {
      status_code: status === 410 ? 410 : e.status,
      body: JSON.stringify({ ...e.toBody(), statusCode: status === 410 ? 410 : e.status }),
    };
  }
  if (status >= 500) {
    log?.error({ err }, 'resumable upload failed');
    return { status_code: 500, body: JSON.stringify(new AppError('INTERNAL_ERROR').toBody()) };
  }
  const e: ErrorBody = {
    ...new AppError('INVALID_INPUT').toBody(),
    statusCode: status,
    message: body.trim() || 'The tus request is not valid.',
  };
  e.nextActions = 'Send a tus 1.0.0 request (Tus-Resumable: 1.0.0) as docs/storage.md describes; tus-js-client does.';
  return { status_code: status, body: JSON.stringify(e) };
}

/** The caller of each exchange, by Node's request (srvx's request keeps it as runtime.node.req). */
class Callers {
  private readonly calls = new WeakMap<object, Caller>();
  set(req: object, caller: Caller): void {
    this.calls.set(req, caller);
  }
  find(req: unknown): Caller | undefined {
    const node = (req as { runtime?: { node?: { req?: object } } }).runtime?.node?.req;
    return node ? this.calls.get(node) : undefined;
  }
  get(req: unknown): Caller {
    const c = this.find(req);
    if (!c) throw new Error('resumable upload without a caller');
    return c;
  }
}

/** The tus server over the uploads' store; its hooks call ResumableUploads. */
async function createTus(uploads: ResumableUploads, callers: Callers, lib: Tus): Promise<Server> {
  const codes = tusCodes(lib);
  const tus = new lib.Server({
    path: RESUMABLE_PATH,
    datastore: await uploads.datastore(),
    maxSize: uploads.maxBytes,
    // Browsers may read these (tus adds its own protocol headers to the list).
    exposedHeaders: ['X-Object-Url', 'X-Object-Etag', 'X-Request-Id'],
    namingFunction: () => uploads.newId(),
    generateUrl: (req, { id }) => `${callers.get(req).base}${RESUMABLE_PATH}/${id}`,
    onIncomingRequest: async (req, id) => {
      if (req.method !== 'POST') await hook(() => uploads.authorizeAccess(callers.get(req).identity, id));
    },
    onUploadCreate: async (req, upload) => ({
      metadata: await hook(() => uploads.authorizeCreate(callers.get(req).identity, upload)),
    }),
    onUploadFinish: async (req, upload) => {
      const c = callers.get(req);
      const object = await hook(() => uploads.finish(c.identity, upload, c.base));
      return { headers: { 'X-Object-Url': object.url, 'X-Object-Etag': object.etag ?? '' } };
    },
    onResponseError: (req, err) => envelope(err, callers.find(req)?.log, codes),
  });
  // The upload is an object now: what the store held of it goes once the answer is out.
  tus.on(lib.EVENTS.POST_FINISH, (_req, _res, upload) => void uploads.discard(upload.id));
  return tus;
}

/**
 * Resumable uploads (tus 1.0.0: creation, creation-with-upload, termination, expiration) by
 * `@tus/server` on Node's own request and response: Fastify resolves the caller (identity,
 * rate limit, CORS), then hands the raw exchange over. The tus server is made on the first
 * request.
 */
export const resumableRoutes: RoutePlugin<'config' | 'resumable'> = async (app, { deps }) => {
  const uploads = deps.resumable;
  const callers = new Callers();
  let ready: Promise<{ tus: Server; rules: Record<string, (v: string) => boolean> }> | null = null;
  const load = () => {
    ready ??= loadTus()
      .then(async (lib) => ({ tus: await createTus(uploads, callers, lib), rules: headerRules(lib) }))
      .catch((err) => {
        ready = null;
        throw err;
      });
    return ready;
  };

  // Bodies stay unread: tus streams them itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const { tus, rules } = await load();
    try {
      assertTusHeaders(request, rules);
    } catch (err) {
      // The body is read and dropped first, so a client still sending sees the answer.
      if (!(await drain(request.raw))) reply.header('connection', 'close');
      throw err;
    }
    callers.set(request.raw, { identity: request.identity, base: baseUrl(request, deps.config), log: request.log });
    // Headers Fastify's hooks set (request id, CORS) go out with tus's answer.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value as string);
    reply.hijack();
    await tus.handle(request.raw, reply.raw);
  };
  const tags = ['storage'];
  const schema = (summary: string) => ({ tags, summary, consumes: ['application/offset+octet-stream'] });
  app.post(
    RESUMABLE_PATH,
    {
      config: { access: 'user' },
      schema: schema(
        'Start a resumable upload (tus 1.0.0 creation, creation-with-upload); Upload-Metadata: bucketName, objectName, contentType',
      ),
    },
    handle,
  );
  app.options(
    RESUMABLE_PATH,
    { config: { access: 'open' }, schema: { tags, summary: 'tus discovery: versions, extensions, Tus-Max-Size' } },
    handle,
  );
  app.route({
    method: ['HEAD', 'PATCH', 'DELETE'],
    url: `${RESUMABLE_PATH}/:id`,
    config: { access: 'user' },
    schema: schema(
      'Resume (HEAD: offset held; PATCH: more bytes at Upload-Offset) or terminate (DELETE) a resumable upload',
    ),
    handler: handle,
  });
};
