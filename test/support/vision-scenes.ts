/**
 * Synthetic scenes for the vision unit tests: a picture made of coloured boxes, the matte a fake segmenter
 * paints over boxes, a NanoDet fake that finds given boxes, and the studio job parameters.
 */
import sharp from 'sharp';
import type { JobParams } from '#core/jobs/job.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { Box, Size } from '#vision/math/geometry.ts';
import type { Matte } from '#vision/math/matte.ts';
import type { Segmenter } from '#vision/segmenter.ts';

/** A PNG of `size` in `background`, each box filled with its colour. */
export function boxesPng(
  size: Size,
  background: string,
  parts: readonly { box: Box; colour: string }[],
): Promise<Buffer> {
  return sharp({ create: { width: size.width, height: size.height, channels: 3, background } })
    .composite(
      parts.map(({ box, colour }) => ({
        input: { create: { width: box.w, height: box.h, channels: 3, background: colour } },
        left: box.x,
        top: box.y,
      })),
    )
    .png()
    .toBuffer();
}

/**
 * A matte of `size` times `scale` (ISNet's matte is 1024 x 1024 whatever the photo's shape), zero but for
 * each box (in `size`'s pixels) at its alpha, later boxes over earlier ones.
 */
export function paintedMatte(
  size: Size,
  parts: readonly { box: Box; alpha: number }[],
  scale = { x: 1, y: 1 },
): Matte {
  const width = size.width * scale.x;
  const height = size.height * scale.y;
  const alpha = new Uint8Array(width * height);
  for (const { box: b, alpha: value } of parts) {
    for (let y = b.y * scale.y; y < (b.y + b.h) * scale.y; y++)
      alpha.fill(value, y * width + b.x * scale.x, y * width + (b.x + b.w) * scale.x);
  }
  return { width, height, alpha };
}

/**
 * ISNet painting `parts` (`paintedMatte`) over whatever image it is given, its matte brought to the photo's
 * size by `toPhotoSize` (kept as it is by default: the scenes are smaller than the models' preview).
 */
export function paintingSegmenter(
  parts: readonly { box: Box; alpha: number }[],
  toPhotoSize: Segmenter['toPhotoSize'] = async (matte) => matte,
): Segmenter {
  const paint = async (image: Size): Promise<Matte> => paintedMatte(image, parts);
  return { modelVersion: 'fake', segment: paint, modelMatte: paint, toPhotoSize };
}

/** NanoDet finding cars (class 2) at these boxes, in the picture's pixels. */
export function carsAt(found: readonly { box: Box; score?: number }[]): ObjectDetector {
  return {
    modelVersion: 'fake',
    detect: async () => found.map(({ box, score = 0.8 }) => ({ classId: 2, score, box })),
  };
}

export const STUDIO_PARAMS: Pick<
  JobParams,
  'background' | 'plateColor' | 'plateSmoothing' | 'plateMaskOnly'
> = {
  background: 'studio',
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
};
