import { createHash } from 'node:crypto';
import { AppError } from '../errors/index.js';
import type { ObjectRead } from './driver.js';
import type { ObjectRow } from './metadata.js';
import { effectiveQuality, type ImageFormat, type RenderBudget, type TransformParams } from './image-budget.js';
import { RenderPool } from './image-pool.js';
import { RenditionCache } from './renditions.js';

export type { Fit, ImageFormat, TransformParams } from './image-budget.js';

/** Largest width or height asked for (the route's schema refuses more with 400). */
export const MAX_DIMENSION = 4096;
/** How long a transform that ran out of time is refused at once instead of rendered again. */
const REMEMBER_COSTLY_MS = 10 * 60_000;
const REMEMBER_COSTLY_MAX = 1000;

/** Inputs sharp reads here (first frame only): the formats browsers show, and TIFF. */
const INPUT_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/gif', 'image/tiff']);

/** The transform of a query, or null when it asks for none (an ordinary download). */
export function transformOf(q: TransformParams): TransformParams | null {
  const { width, height, resize, format, quality } = q;
  if (
    width === undefined &&
    height === undefined &&
    resize === undefined &&
    format === undefined &&
    quality === undefined
  )
    return null;
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

export interface ImageLimits extends RenderBudget {
  /** Largest object read to transform. */
  maxInputBytes: number;
  cacheBytes: number;
  /** Renders at once, each in its own process; renders waiting at most; the time one may take. */
  concurrentRenders: number;
  renderQueue: number;
  renderSeconds: number;
}

/**
 * Image transforms on download, bounded per render (docs/storage.md: output pixels, encoder
 * effort and quality, renders at once and waiting, a time limit that ends the render process),
 * renditions cached.
 */
export class ImageTransforms {
  private readonly cache: RenditionCache;
  readonly pool: RenderPool;
  /** Transforms that ran out of time lately (tag → until when they are refused at once). */
  private readonly costly = new Map<string, number>();

  constructor(
    directory: string,
    private readonly limits: ImageLimits,
  ) {
    this.cache = new RenditionCache(directory, limits.cacheBytes);
    this.pool = new RenderPool({
      renders: limits.concurrentRenders,
      queue: limits.renderQueue,
      timeoutMs: limits.renderSeconds * 1000,
    });
  }

  /**
   * The rendition of `row` (already authorised) for `p` in `format`: from the cache, or read
   * with `open`, checked and rendered. Non-images are 415 NOT_AN_IMAGE; images or renditions
   * over the limits 422 IMAGE_TOO_LARGE, refused before any pixel is decoded; a render past the
   * time limit 422 IMAGE_TOO_COSTLY; no turn to render 503 IMAGE_BUSY.
   */
  async render(
    row: ObjectRow,
    p: TransformParams,
    format: ImageFormat | 'origin',
    open: () => Promise<ObjectRead>,
  ): Promise<Rendition> {
    // AVIF's quality is capped: every quality above the cap is the same rendition.
    const q = format === 'avif' && p.quality !== undefined ? { ...p, quality: effectiveQuality('avif', p.quality) } : p;
    const tag = createHash('sha256')
      .update(
        `${row.bucket}\n${row.key}\n${row.etag ?? ''}@${row.uploadedAt.toISOString()}\n${canonical(q)}\n${format}`,
      )
      .digest('base64url')
      .slice(0, 32);
    if (!INPUT_TYPES.has(row.mimeType.toLowerCase())) throw notAnImage(row.mimeType);
    const held = await this.cache.get(tag);
    if (held) return { bytes: held, contentType: contentTypeOf(held), tag };
    if (row.size > this.limits.maxInputBytes)
      throw tooLarge(`The image has ${row.size} bytes; at most ${this.limits.maxInputBytes} are transformed.`);
    this.refuseIfCostly(tag);
    const input = await readWhole(open, this.limits.maxInputBytes);
    const budget = {
      maxInputPixels: this.limits.maxInputPixels,
      maxOutputPixels: this.limits.maxOutputPixels,
      maxAvifPixels: this.limits.maxAvifPixels,
    };
    let bytes: Buffer;
    try {
      bytes = await this.pool.run({ input, params: q, format, budget });
    } catch (err) {
      if (err instanceof AppError && err.code === 'IMAGE_TOO_COSTLY') this.remember(tag);
      throw err;
    }
    await this.cache.put(tag, bytes);
    return { bytes, contentType: contentTypeOf(bytes), tag };
  }

  private refuseIfCostly(tag: string): void {
    const until = this.costly.get(tag);
    if (until === undefined) return;
    if (until > Date.now()) {
      throw new AppError('IMAGE_TOO_COSTLY', {
        message: `This transform of this image ran out of time (IMAGE_RENDER_SECONDS = ${this.limits.renderSeconds}) a moment ago and is not rendered again for a while.`,
      });
    }
    this.costly.delete(tag);
  }

  private remember(tag: string): void {
    this.costly.delete(tag);
    this.costly.set(tag, Date.now() + REMEMBER_COSTLY_MS);
    for (const [old] of this.costly) {
      if (this.costly.size <= REMEMBER_COSTLY_MAX) break;
      this.costly.delete(old);
    }
  }

  /** Ends the render processes. */
  close(): Promise<void> {
    return this.pool.close();
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

function notAnImage(what: string): AppError {
  return new AppError('NOT_AN_IMAGE', {
    message: `The object is not an image that can be transformed (type ${what}).`,
  });
}

function tooLarge(message: string): AppError {
  return new AppError('IMAGE_TOO_LARGE', { message });
}
