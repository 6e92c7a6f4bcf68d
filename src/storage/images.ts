import { createHash } from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import { AppError } from '../errors/index.js';
import type { ObjectRead } from './driver.js';
import type { ObjectRow } from './metadata.js';
import { RenditionCache } from './renditions.js';

export type Fit = 'cover' | 'contain' | 'fill';
export type ImageFormat = 'webp' | 'avif' | 'jpeg' | 'png';

/** The transform a download asks for (`?width&height&resize&format&quality`). */
export interface TransformParams {
  width?: number;
  height?: number;
  resize?: Fit;
  format?: ImageFormat | 'origin';
  quality?: number;
}

/** Largest width or height asked for (the route's schema refuses more with 400). */
export const MAX_DIMENSION = 4096;
/** Renders at once per process; more wait their turn (one per core on a small machine). */
const CONCURRENT_RENDERS = 2;
/** Longest one render may take (sharp's own timeout). */
const RENDER_SECONDS = 10;

/** Inputs sharp reads here (first frame only): the formats browsers show, and TIFF. */
const INPUT_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/gif', 'image/tiff']);
const OUTPUT_OF: Record<string, ImageFormat> = { jpeg: 'jpeg', png: 'png', webp: 'webp', heif: 'avif', avif: 'avif', gif: 'png', tiff: 'png' };

/** The transform of a query, or null when it asks for none (an ordinary download). */
export function transformOf(q: TransformParams): TransformParams | null {
  const { width, height, resize, format, quality } = q;
  if (width === undefined && height === undefined && resize === undefined && format === undefined && quality === undefined) return null;
  return { width, height, resize, format, quality };
}

/** One spelling per transform: what a signed link signs and a rendition is named by. */
export function canonical(p: TransformParams): string {
  const parts: string[] = [];
  if (p.width !== undefined) parts.push(`width=${p.width}`);
  if (p.height !== undefined) parts.push(`height=${p.height}`);
  if (p.resize !== undefined) parts.push(`resize=${p.resize}`);
  if (p.format !== undefined) parts.push(`format=${p.format}`);
  if (p.quality !== undefined) parts.push(`quality=${p.quality}`);
  return parts.join('&');
}

/** Without `format`, the caller's Accept picks WebP (else AVIF); else the source's own format. */
export function pickFormat(p: TransformParams, accept: string | undefined): ImageFormat | 'origin' {
  if (p.format !== undefined) return p.format;
  const a = (accept ?? '').toLowerCase();
  if (a.includes('image/webp')) return 'webp';
  if (a.includes('image/avif')) return 'avif';
  return 'origin';
}

export interface Rendition {
  bytes: Buffer;
  contentType: string;
  /** Names this rendition of this version of the object (an ETag). */
  tag: string;
}

export interface ImageLimits {
  /** Largest width × height decoded (a decompression bomb is refused from its header). */
  maxInputPixels: number;
  /** Largest object read to transform. */
  maxInputBytes: number;
  cacheBytes: number;
}

/** Image transforms on download with sharp, bounded per request, renditions cached. */
export class ImageTransforms {
  private readonly cache: RenditionCache;
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    directory: string,
    private readonly limits: ImageLimits,
  ) {
    this.cache = new RenditionCache(directory, limits.cacheBytes);
  }

  /**
   * The rendition of `row` (already authorised) for `p` in `format`: from the cache, or read
   * with `open`, checked and rendered. Non-images are 415 NOT_AN_IMAGE; images over the limits
   * 422 IMAGE_TOO_LARGE, refused before any pixel is decoded.
   */
  async render(row: ObjectRow, p: TransformParams, format: ImageFormat | 'origin', open: () => Promise<ObjectRead>): Promise<Rendition> {
    const tag = createHash('sha256')
      .update(`${row.bucket}\n${row.key}\n${row.etag ?? ''}@${row.uploadedAt.toISOString()}\n${canonical(p)}\n${format}`)
      .digest('base64url')
      .slice(0, 32);
    if (!INPUT_TYPES.has(row.mimeType.toLowerCase())) throw notAnImage(row.mimeType);
    const held = await this.cache.get(tag);
    if (held) return { bytes: held, contentType: contentTypeOf(held), tag };
    if (row.size > this.limits.maxInputBytes) throw tooLarge(`The image has ${row.size} bytes; at most ${this.limits.maxInputBytes} are transformed.`);
    const bytes = await this.turn(async () => this.transform(await readWhole(open, this.limits.maxInputBytes), p, format));
    await this.cache.put(tag, bytes);
    return { bytes, contentType: contentTypeOf(bytes), tag };
  }

  private async transform(input: Buffer, p: TransformParams, format: ImageFormat | 'origin'): Promise<Buffer> {
    const options = { limitInputPixels: this.limits.maxInputPixels, failOn: 'error' as const };
    let meta: Metadata;
    try {
      meta = await sharp(input, { ...options, limitInputPixels: false }).metadata();
    } catch (err) {
      throw notAnImage('the bytes', err);
    }
    const pixels = (meta.width ?? 0) * (meta.height ?? 0);
    if (!meta.width || !meta.height || pixels > this.limits.maxInputPixels) {
      throw tooLarge(`The image is ${meta.width}×${meta.height} pixels; at most ${this.limits.maxInputPixels} pixels are transformed.`);
    }
    const out = format === 'origin' ? (OUTPUT_OF[meta.format ?? ''] ?? 'png') : format;
    let img = sharp(input, options).rotate().timeout({ seconds: RENDER_SECONDS });
    if (p.width !== undefined || p.height !== undefined) {
      img = img.resize({ width: p.width, height: p.height, fit: p.resize ?? 'cover', withoutEnlargement: true });
    }
    img = img.toFormat(out, { quality: p.quality ?? (out === 'avif' ? 50 : 80) });
    try {
      return await img.toBuffer();
    } catch (err) {
      throw notAnImage('the bytes', err);
    }
  }

  /** Runs `fn` when fewer than CONCURRENT_RENDERS renders are running. */
  private async turn<T>(fn: () => Promise<T>): Promise<T> {
    while (this.running >= CONCURRENT_RENDERS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/** The object's bytes, refusing more than `max` (the driver's read is what counts, not the row). */
async function readWhole(open: () => Promise<ObjectRead>, max: number): Promise<Buffer> {
  const read = await open();
  if (read.size > max) {
    read.body.destroy();
    throw tooLarge(`The image has ${read.size} bytes; at most ${max} are transformed.`);
  }
  return Buffer.concat(await read.body.toArray());
}

/** The type of a rendition, from its first bytes (renditions are stored without metadata). */
function contentTypeOf(b: Buffer): string {
  if (b[0] === 0xff && b[1] === 0xd8) return 'image/jpeg';
  if (b[0] === 0x89 && b[1] === 0x50) return 'image/png';
  if (b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return 'image/avif';
}

function notAnImage(what: string, cause?: unknown): AppError {
  return new AppError('NOT_AN_IMAGE', { message: `The object is not an image that can be transformed (${what === 'the bytes' ? 'its bytes are not a readable image' : `type ${what}`}).`, cause });
}

function tooLarge(message: string): AppError {
  return new AppError('IMAGE_TOO_LARGE', { message });
}
