import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AppError } from '../errors/index.js';

/** Bucket names: 1–63 letters, digits, underscore or hyphen (the spec's rule). */
export const BUCKET_NAME_PATTERN = '^[A-Za-z0-9_-]{1,63}$';
const BUCKET_NAME = new RegExp(BUCKET_NAME_PATTERN);

export const MAX_KEY_BYTES = 1024;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isValidBucketName(name: string): boolean {
  return BUCKET_NAME.test(name);
}

/**
 * Why `key` is refused, or null when it is a valid object key: 1–1024 UTF-8 bytes, `/`
 * separates segments; no leading `/`, no empty, `.` or `..` segment, no backslash, no NUL or
 * other control character, no unpaired surrogate.
 */
export function keyProblem(key: string): string | null {
  if (key.length === 0) return 'The key is empty.';
  if (LONE_SURROGATE.test(key)) return 'The key is not valid Unicode.';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `The key is longer than ${MAX_KEY_BYTES} bytes.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'The key contains a NUL or another control character.';
  if (key.includes('\\')) return 'The key contains a backslash.';
  if (key.startsWith('/')) return 'The key starts with "/".';
  for (const segment of key.split('/')) {
    if (segment === '') return 'The key has an empty segment ("//" or a trailing "/").';
    if (segment === '.' || segment === '..') return 'The key has a "." or ".." segment.';
  }
  return null;
}

/** Throws INVALID_KEY when `key` is not a valid object key. */
export function assertValidKey(key: string): string {
  const problem = keyProblem(key);
  if (problem) throw new AppError('INVALID_KEY', { message: problem });
  return key;
}

/** Decodes a key taken from a URL path (`%2F` and raw `/` both separate segments). */
export function decodeKeyFromPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new AppError('INVALID_KEY', { message: 'The key in the path is not valid percent-encoding.' });
  }
}

/** The URL path form of a key: each segment percent-encoded, joined with `/`. */
export function encodeKeyForPath(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/** `<safe base name>-<time>-<random><ext>` from a client's file name. */
export function generateKey(filename: string, now = Date.now()): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  let ext = path.extname(base).toLowerCase();
  if (!/^\.[a-z0-9]{1,10}$/.test(ext)) ext = '';
  const stem = (ext ? base.slice(0, -ext.length) : base)
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return `${stem || 'file'}-${now}-${randomBytes(4).toString('hex')}${ext}`;
}

const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.wasm': 'application/wasm',
  '.xml': 'application/xml',
};

const MIME =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;\s*[A-Za-z0-9_-]+=("[^"\r\n]*"|[A-Za-z0-9_.+-]+))*$/;

/**
 * The content type to store: the client's when it is a well-formed media type (it is echoed
 * in a response header later), else a guess from the key's extension, else octet-stream.
 */
export function resolveContentType(given: string | null | undefined, key: string): string {
  const g = given?.trim();
  if (g && g.length <= 255 && MIME.test(g) && g.toLowerCase() !== 'application/octet-stream') return g;
  return TYPES[path.extname(key).toLowerCase()] ?? 'application/octet-stream';
}

// Types a browser may show inline without running anything; everything else is served as a
// download, so stored HTML, SVG or script can never run on the API's origin.
const INLINE =
  /^(image\/(png|jpeg|gif|webp|avif|bmp|x-icon)|video\/[\w.+-]+|audio\/[\w.+-]+|text\/plain|text\/csv|application\/json|application\/pdf)$/i;

export function servedInline(contentType: string): boolean {
  return INLINE.test(contentType.split(';')[0]!.trim());
}
