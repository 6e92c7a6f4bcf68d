import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../../errors/index.js';
import { PROJECT_ROOT } from '../../../lib/code-dir.js';
import type { RoutePlugin } from '../../types.js';

/** Where `npm run build` puts the dashboard: <project>/dist/dashboard, from src/ or dist/ alike. */
export const DASHBOARD_DIR = path.join(PROJECT_ROOT, 'dist', 'dashboard');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

// Everything the page loads comes from this origin; nothing from the internet, no inline script.
// The code editor adds one <style> element: it carries the page's nonce (a new one per load).
const csp = (nonce: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
const NONCE_META = '<meta name="csp-nonce" content="" />';

async function fileAt(dir: string, rel: string): Promise<{ file: string; size: number } | null> {
  const file = path.resolve(dir, `.${path.posix.normalize(`/${rel}`)}`);
  if (file !== dir && !file.startsWith(dir + path.sep)) return null;
  const s = await stat(file).catch(() => null);
  return s?.isFile() ? { file, size: s.size } : null;
}

function headers(reply: FastifyReply, file: string, cache: string, nonce: string) {
  return reply
    .header('content-type', TYPES[path.extname(file)] ?? 'application/octet-stream')
    .header('cache-control', cache)
    .header('content-security-policy', csp(nonce))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

function send(reply: FastifyReply, found: { file: string; size: number }, cache: string) {
  return headers(reply, found.file, cache, randomBytes(16).toString('base64'))
    .header('content-length', found.size)
    .send(createReadStream(found.file));
}

/** index.html with a fresh CSP nonce in its meta tag and header. */
async function sendIndex(reply: FastifyReply, file: string) {
  const nonce = randomBytes(16).toString('base64');
  const html = (await readFile(file, 'utf8')).replace(NONCE_META, `<meta name="csp-nonce" content="${nonce}" />`);
  return headers(reply, file, 'no-cache', nonce).send(html);
}

/**
 * The admin web UI as static files from `dir`: hashed assets cached for a year, any other
 * path answered with index.html (the app routes in the browser), a 503 envelope while the
 * build is missing. The page itself holds no secret: it asks for the admin key.
 */
export function dashboardAt(dir: string): RoutePlugin {
  return async (app) => {
    const handler = async (request: { params: { '*'?: string } }, reply: FastifyReply) => {
      const rel = request.params['*'] ?? '';
      const index = await fileAt(dir, 'index.html');
      if (!index) throw new AppError('DASHBOARD_NOT_BUILT');
      const found = rel ? await fileAt(dir, rel) : null;
      if (found && rel.startsWith('assets/')) return send(reply, found, 'public, max-age=31536000, immutable');
      if (found && rel !== 'index.html') return send(reply, found, 'public, max-age=300');
      if (rel.startsWith('assets/'))
        throw new AppError('NOT_FOUND', {
          message: `No dashboard file "${rel.slice(0, 200)}".`,
          nextActions: 'Reload /dashboard: the page may be older than the build.',
        });
      return sendIndex(reply, index.file);
    };
    // Static files: no credential read, and not counted against the per-minute limit.
    const config = { access: 'open' as const, rateLimit: false as const };
    app.get('/dashboard', { config, schema: { hide: true } }, (request, reply) =>
      request.url.endsWith('/') ? handler({ params: {} }, reply) : reply.redirect('/dashboard/', 301),
    );
    app.get('/dashboard/*', { config, schema: { hide: true } }, (request, reply) => handler(request as never, reply));
    // The root of the server: a newcomer opening http://localhost:7130/ lands on the dashboard.
    app.get('/', { config, schema: { hide: true } }, async (_request, reply) => {
      if (!(await fileAt(dir, 'index.html'))) {
        throw new AppError('ROUTE_NOT_FOUND', {
          message: 'Nothing is served at /: the dashboard is not built.',
          nextActions:
            'Run `npm run build` to serve the dashboard at /dashboard; the API is under /api (GET /api/openapi.json).',
        });
      }
      return reply.redirect(`${app.prefix}/dashboard/`, 302);
    });
  };
}

export const dashboardRoutes: RoutePlugin = dashboardAt(DASHBOARD_DIR);
