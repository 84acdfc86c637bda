import sharp from 'sharp';
import { PlateNotFoundError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import type { OperationInput, OperationResult } from '#core/ports.ts';
import {
  contentTypeOf,
  type DecodedImage,
  encodeResult,
  type OutputOptions,
  openSource,
  outputSize,
  quarterShared,
} from '#vision/image-io.ts';
import type { Size } from '#vision/math/geometry.ts';
import { assertUsableMatte, type Matte } from '#vision/math/matte.ts';
import { reportedPlates } from '#vision/math/plate-report.ts';
import { fillShapes, type PlateShape, plateShapes } from '#vision/plate-fill.ts';
import { carDetector } from '../car-detector.ts';
import type { ModelCache } from '../models.ts';
import { type PlateDetection, plateOutlines } from '../plate-detector.ts';
import { isnetSegmenter } from '../segmenter.ts';
import { mainCarCutout } from './main-car.ts';
import { plateDetector } from './plate.ts';

/**
 * A mask as an 8-bit greyscale PNG, one channel, at the photo's size or scaled down to `maxWidth` (so it
 * lines up with a result scaled so); made from raw bytes, so it carries no metadata. Level 3: a 12 MP
 * matte took about half the time of level 6 for a few percent more bytes.
 */
export function encodeMask(matte: Matte, maxWidth: number | null = null): Promise<Buffer> {
  const { width, height, alpha } = matte;
  const size = outputSize(width, height, maxWidth);
  let raw = sharp(alpha, { raw: { width, height, channels: 1 } });
  if (size.width !== width) raw = raw.resize(size.width, size.height, { fit: 'fill', kernel: 'lanczos3' });
  return raw.toColourspace('b-w').png({ compressionLevel: 3 }).toBuffer();
}

/**
 * The one file of a mask operation, as the job asked: PNG unless `format` says otherwise (WEBP lossless,
 * JPEG as any greyscale photo), at most `maxWidth` wide; named after the operation and published under
 * `url`, its own `<operation>_url` and `mask_url`.
 */
export async function maskFile(
  operation: 'plate_mask' | 'background_mask',
  matte: Matte,
  options: OutputOptions,
): Promise<OperationResult['files'][number]> {
  const format = options.format ?? 'png';
  const bytes =
    format === 'png'
      ? await encodeMask(matte, options.maxWidth ?? null)
      : (
          await encodeResult(
            {
              width: matte.width,
              height: matte.height,
              channels: 3,
              format: 'image/png',
              pixels: grey(matte),
            },
            options,
          )
        ).data;
  return {
    name: `${operation}.${format}`,
    roles: ['url', `${operation}_url`, 'mask_url'],
    bytes,
    contentType: contentTypeOf(format),
  };
}

/** A mask as RGB for the encoders that take no single channel. */
function grey(matte: Matte): Buffer {
  const rgb = Buffer.alloc(matte.alpha.length * 3);
  for (let i = 0, o = 0; i < matte.alpha.length; i++, o += 3)
    rgb[o] = rgb[o + 1] = rgb[o + 2] = matte.alpha[i]!;
  return rgb;
}

/**
 * White where `fillPlates` painted (or would paint) these shapes (`plateShapes`), black elsewhere. Each
 * shape is drawn into a small RGB tile around it and copied into the single-channel mask, so the cost is
 * the plates' area, not the photo's.
 */
export function plateMask(size: { width: number; height: number }, shapes: readonly PlateShape[]): Matte {
  const { width, height } = size;
  const alpha = new Uint8Array(width * height);
  for (const { polygon, ramp } of shapes) {
    const xs = polygon.map((p) => p.x);
    const ys = polygon.map((p) => p.y);
    const margin = Math.ceil(ramp) + 1;
    const x0 = Math.max(0, Math.floor(Math.min(...xs)) - margin);
    const y0 = Math.max(0, Math.floor(Math.min(...ys)) - margin);
    const x1 = Math.min(width, Math.ceil(Math.max(...xs)) + margin);
    const y1 = Math.min(height, Math.ceil(Math.max(...ys)) + margin);
    if (x1 <= x0 || y1 <= y0) continue;
    const tile: DecodedImage = {
      width: x1 - x0,
      height: y1 - y0,
      channels: 3,
      format: 'image/png',
      pixels: Buffer.alloc((x1 - x0) * (y1 - y0) * 3),
    };
    const local = polygon.map((p) => ({ x: p.x - x0, y: p.y - y0 }));
    fillShapes(tile, [{ polygon: local, ramp }], '#ffffff');
    for (let y = 0; y < tile.height; y++) {
      for (let x = 0; x < tile.width; x++) {
        const v = tile.pixels[(y * tile.width + x) * 3]!;
        const i = (y0 + y) * width + x0 + x;
        if (v > alpha[i]!) alpha[i] = v;
      }
    }
  }
  return { width, height, alpha };
}

/** `plate_mask`: white where the plates are (as `plate` would fill them); no plate is 803, as for `plate`. */
export async function plateMaskOperation(
  models: ModelCache,
  input: OperationInput,
): Promise<OperationResult> {
  const detector = await plateDetector(models);
  // Only the photo's size is needed at full resolution: the detector decodes what it reads.
  const image = await openSource(input.source);
  const plates = await detector.find(quarterShared(image));
  if (plates.length === 0) throw new PlateNotFoundError('No license plate was detected in the photo');
  return plateMaskOutput(image, plates, input.params, { plate_detector: detector.modelVersion });
}

/** What `plate_mask` gives for its job: the mask of the plates found, and where they are in it. */
export async function plateMaskOutput(
  image: Size,
  plates: readonly PlateDetection[],
  params: Pick<JobParams, 'plateSmoothing' | 'plateMaskOnly'> & OutputOptions,
  modelVersion: Record<string, string>,
): Promise<OperationResult> {
  const mask = plateMask(
    image,
    plateShapes(image, plateOutlines(plates), {
      smoothing: params.plateSmoothing,
      maskOnly: params.plateMaskOnly,
    }),
  );
  return {
    files: [await maskFile('plate_mask', mask, params)],
    modelVersion,
    inferenceCached: false,
    plates: reportedPlates(plates, {
      drawn: image,
      encoded: outputSize(image.width, image.height, params.maxWidth),
    }),
  };
}

/**
 * `background_mask`: the matte `background` composites with, white = the main car, black = background
 * (other cars included), soft edges.
 */
export async function backgroundMaskOperation(
  models: ModelCache,
  input: OperationInput,
): Promise<OperationResult> {
  const segmenter = await isnetSegmenter(models);
  const cars = await carDetector(models);
  // The same matte `background` composites with: refined along the photo's edges at full size.
  const levels = await openSource(input.source);
  const { matte, stats } = await mainCarCutout({ segmenter, cars }, levels, levels.atScale(1));
  assertUsableMatte(stats);
  return {
    files: [await maskFile('background_mask', matte, input.params)],
    modelVersion: { segmenter: segmenter.modelVersion, car_detector: cars.modelVersion },
    inferenceCached: false,
  };
}
