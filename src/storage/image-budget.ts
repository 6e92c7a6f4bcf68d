// What one render may cost, shared by the server and its render processes (no sharp here): the
// size a transform would produce, the pixels each output format may have, and the encoder
// settings that bound effort and quality.

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

/** The bounds of one render (IMAGE_* settings, docs/storage.md). */
export interface RenderBudget {
  /** Largest width × height decoded (read from the header first: a bomb is never decoded). */
  maxInputPixels: number;
  /** Largest width × height of a rendition in JPEG, PNG or WebP. */
  maxOutputPixels: number;
  /** Largest width × height of an AVIF rendition (its encoder is the slowest by far). */
  maxAvifPixels: number;
}

/** AVIF's encoder effort (0–9, sharp's default 4): 2 is about 7× faster at 2048² and quality 100. */
export const AVIF_EFFORT = 2;
/** Highest AVIF quality rendered; above it, the time doubles for a file no eye tells apart. */
export const AVIF_MAX_QUALITY = 80;
/** WebP's encoder effort (0–6, sharp's default 4). */
export const WEBP_EFFORT = 4;

/** The quality a rendition is encoded with: the one asked for (capped for AVIF), else the default. */
export function effectiveQuality(format: ImageFormat, quality: number | undefined): number {
  if (format === 'avif') return Math.min(quality ?? 50, AVIF_MAX_QUALITY);
  return quality ?? 80;
}

/** sharp's output options of a format: the quality and the bounded effort. */
export function encoderOptions(format: ImageFormat, quality: number | undefined): Record<string, number> {
  const q = effectiveQuality(format, quality);
  if (format === 'avif') return { quality: q, effort: AVIF_EFFORT };
  if (format === 'webp') return { quality: q, effort: WEBP_EFFORT };
  return { quality: q };
}

/** The largest width × height a transform of a `w`×`h` image can give (never enlarged). */
export function outputPixels(
  w: number,
  h: number,
  p: Pick<TransformParams, 'width' | 'height'>,
): { width: number; height: number } {
  if (p.width !== undefined && p.height !== undefined)
    return { width: Math.min(p.width, w), height: Math.min(p.height, h) };
  if (p.width !== undefined) {
    const width = Math.min(p.width, w);
    return { width, height: Math.max(1, Math.round((h * width) / w)) };
  }
  if (p.height !== undefined) {
    const height = Math.min(p.height, h);
    return { width: Math.max(1, Math.round((w * height) / h)), height };
  }
  return { width: w, height: h };
}

/** Why a rendition of `out` pixels in `format` is over the budget, or null when it is within. */
export function overBudget(
  out: { width: number; height: number },
  format: ImageFormat,
  budget: RenderBudget,
): string | null {
  const max = format === 'avif' ? Math.min(budget.maxAvifPixels, budget.maxOutputPixels) : budget.maxOutputPixels;
  const pixels = out.width * out.height;
  if (pixels <= max) return null;
  const setting =
    format === 'avif' && budget.maxAvifPixels < budget.maxOutputPixels
      ? 'IMAGE_MAX_AVIF_PIXELS'
      : 'IMAGE_MAX_OUTPUT_PIXELS';
  return `The ${format.toUpperCase()} rendition would be ${out.width}×${out.height} (${pixels} pixels); at most ${max} are rendered (${setting}).`;
}
