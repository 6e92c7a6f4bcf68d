// The render process (forked by image-pool.ts): sharp lives here, not in the server, so a render
// that runs too long is ended with SIGKILL and whatever memory libvips took goes back to the
// system with the process. One render at a time; the request and answer travel over IPC.
import sharp from 'sharp';
import {
  encoderOptions,
  type ImageFormat,
  outputPixels,
  overBudget,
  type RenderBudget,
  type TransformParams,
} from './image-budget.js';

/** What the server sends: the image's bytes and the transform. */
export interface RenderRequest {
  id: number;
  input: Uint8Array;
  params: TransformParams;
  format: ImageFormat | 'origin';
  budget: RenderBudget;
}

/** What comes back: the rendition, or why not (a code of the catalogue), and this process's memory. */
export type RenderAnswer =
  | { id: number; ok: true; bytes: Uint8Array; rss: number }
  | { id: number; ok: false; code: 'NOT_AN_IMAGE' | 'IMAGE_TOO_LARGE'; message: string; rss: number };

const OUTPUT_OF: Record<string, ImageFormat> = {
  jpeg: 'jpeg',
  png: 'png',
  webp: 'webp',
  heif: 'avif',
  avif: 'avif',
  gif: 'png',
  tiff: 'png',
};

// Nothing is kept between renders, and libvips uses one thread: a render costs one core at most.
sharp.cache(false);
sharp.concurrency(1);

class Refused extends Error {
  constructor(
    readonly code: 'NOT_AN_IMAGE' | 'IMAGE_TOO_LARGE',
    message: string,
  ) {
    super(message);
  }
}

async function render(req: RenderRequest): Promise<Uint8Array> {
  const input = Buffer.from(req.input.buffer, req.input.byteOffset, req.input.byteLength);
  const options = { limitInputPixels: req.budget.maxInputPixels, failOn: 'error' as const };
  const meta = await sharp(input, { ...options, limitInputPixels: false })
    .metadata()
    .catch(() => {
      throw new Refused('NOT_AN_IMAGE', 'its bytes are not a readable image');
    });
  const pixels = (meta.width ?? 0) * (meta.height ?? 0);
  if (!meta.width || !meta.height || pixels > req.budget.maxInputPixels) {
    throw new Refused(
      'IMAGE_TOO_LARGE',
      `The image is ${meta.width}×${meta.height} pixels; at most ${req.budget.maxInputPixels} pixels are transformed (IMAGE_MAX_INPUT_PIXELS).`,
    );
  }
  const out = req.format === 'origin' ? (OUTPUT_OF[meta.format ?? ''] ?? 'png') : req.format;
  // EXIF orientations 5–8 swap width and height; the pixel count is the same either way.
  const over = overBudget(outputPixels(meta.width, meta.height, req.params), out, req.budget);
  if (over) throw new Refused('IMAGE_TOO_LARGE', over);
  let img = sharp(input, options).rotate();
  const p = req.params;
  if (p.width !== undefined || p.height !== undefined) {
    img = img.resize({ width: p.width, height: p.height, fit: p.resize ?? 'cover', withoutEnlargement: true });
  }
  return img
    .toFormat(out, encoderOptions(out, p.quality))
    .toBuffer()
    .catch(() => {
      throw new Refused('NOT_AN_IMAGE', 'its bytes are not a readable image');
    });
}

process.on('message', (req: RenderRequest) => {
  render(req).then(
    (bytes) => process.send!({ id: req.id, ok: true, bytes, rss: process.memoryUsage.rss() } satisfies RenderAnswer),
    (err: unknown) => {
      const refused = err instanceof Refused ? err : new Refused('NOT_AN_IMAGE', 'its bytes are not a readable image');
      process.send!({
        id: req.id,
        ok: false,
        code: refused.code,
        message: refused.message,
        rss: process.memoryUsage.rss(),
      } satisfies RenderAnswer);
    },
  );
});
// The server went away: so does this process.
process.on('disconnect', () => process.exit(0));
// Ready: sharp is loaded, the next message is a render (its time starts now).
process.send!({ ready: true });
