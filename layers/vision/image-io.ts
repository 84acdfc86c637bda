import sharp from 'sharp';
import { PayloadTooLargeError, SourceImageError, UnsupportedMediaTypeError } from '#core/errors.ts';
import { type ImageType, sniffImageType } from '#core/images.ts';
import { OUTPUT_QUALITY, type OutputFormat } from '#core/jobs/job.ts';
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';

/**
 * A source decoded once for the whole pipeline: 8-bit sRGB, EXIF orientation applied, interleaved.
 * `channels` is 4 only for PNG sources with transparency, which stay PNG on output.
 */
export interface DecodedImage {
  readonly width: number;
  readonly height: number;
  readonly channels: 3 | 4;
  /** The source's type, from its bytes. */
  readonly format: ImageType;
  readonly pixels: Buffer;
}

export interface EncodedImage {
  readonly data: Buffer;
  /** What a result image is encoded as: the same three types a source may be. */
  readonly contentType: ImageType;
  /** The encoded size: smaller than the image's when `maxWidth` scaled it down. */
  readonly width: number;
  readonly height: number;
}

/** What the job asked of its result image (`format`, `max_width`); unset fields keep the defaults. */
export interface OutputOptions {
  readonly format?: OutputFormat | null;
  readonly maxWidth?: number | null;
}

const CONTENT_TYPES: Record<OutputFormat, ImageType> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

/** The content type of an output format. */
export const contentTypeOf = (format: OutputFormat): ImageType => CONTENT_TYPES[format];

/** The size an image of `width` x `height` is encoded at under `maxWidth`: never wider, never enlarged. */
export function outputSize(
  width: number,
  height: number,
  maxWidth: number | null | undefined,
): { width: number; height: number } {
  if (!maxWidth || width <= maxWidth) return { width, height };
  return { width: maxWidth, height: Math.max(1, Math.round((height * maxWidth) / width)) };
}

export interface DecodeOptions {
  /** Sources above this many pixels are refused before their pixels are decoded. */
  readonly maxPixels?: number;
}

export async function decodeSource(bytes: Buffer, options: DecodeOptions = {}): Promise<DecodedImage> {
  const format = sniffImageType(bytes);
  if (!format) throw new UnsupportedMediaTypeError('The file is not a JPEG, PNG or WEBP image');
  const { maxPixels = MAX_IMAGE_PIXELS } = options;
  try {
    const image = sharp(bytes, { autoOrient: true, limitInputPixels: maxPixels });
    // Only a PNG keeps its alpha: no second header parse for the other types.
    const keepAlpha = format === 'image/png' && (await image.metadata()).hasAlpha === true;
    // JPEG output has no alpha: a transparent WEBP is put on white rather than on black.
    const pipeline = keepAlpha ? image.ensureAlpha() : image.flatten({ background: '#ffffff' });
    const { data, info } = await pipeline.toColourspace('srgb').raw({ depth: 'uchar' }).toBuffer({
      resolveWithObject: true,
    });
    if (info.channels !== 3 && info.channels !== 4) {
      throw new Error(`decoded to ${info.channels} channels`);
    }
    return { width: info.width, height: info.height, channels: info.channels, format, pixels: data };
  } catch (error) {
    throw decodeError(error, format, maxPixels);
  }
}

/** sharp's refusal over `limitInputPixels` is 413; any other failure to read the bytes is 400. */
function decodeError(error: unknown, format: ImageType, maxPixels: number): Error {
  if (/pixel limit/i.test((error as Error).message)) {
    return new PayloadTooLargeError(`The image has more than ${maxPixels} pixels`, { cause: error });
  }
  return new SourceImageError(`The ${format} file could not be decoded`, { cause: error });
}

/**
 * JPEG for JPEG and WEBP sources, PNG for PNG sources, unless `format` asks for another;
 * scaled down (Lanczos) to `maxWidth` when wider. The pixels enter sharp raw, so nothing of the source's
 * metadata (EXIF, GPS, XMP, ICC) can reach the result. A 4-channel image keeps its alpha in PNG and WEBP
 * and is put on white in JPEG, which has none.
 */
export async function encodeResult(image: DecodedImage, options: OutputOptions = {}): Promise<EncodedImage> {
  const { width, height, channels, pixels } = image;
  const format = options.format ?? (image.format === 'image/png' ? 'png' : 'jpg');
  const size = outputSize(width, height, options.maxWidth);
  let raw = sharp(pixels, { raw: { width, height, channels } });
  if (size.width !== width) raw = raw.resize(size.width, size.height, { fit: 'fill', kernel: 'lanczos3' });
  const done = (data: Buffer): EncodedImage => ({ data, contentType: CONTENT_TYPES[format], ...size });
  if (format === 'png') return done(await raw.png({ compressionLevel: 6 }).toBuffer());
  // Lossy, as most photo services deliver WEBP; alpha is kept exact.
  if (format === 'webp')
    return done(await raw.webp({ quality: OUTPUT_QUALITY.webp, alphaQuality: 100 }).toBuffer());
  if (channels === 4) raw = raw.flatten({ background: '#ffffff' });
  // One pass, no mozjpeg: optimised Huffman tables hold every coefficient of the photo in fresh memory for a
  // few percent fewer bytes (docs/decisions/0024-inference-memory-and-threads.md).
  return done(
    await raw.jpeg({ quality: OUTPUT_QUALITY.jpg, mozjpeg: false, optimiseCoding: false }).toBuffer(),
  );
}

/**
 * A source whose pixels are decoded on demand at the scale a step needs: the plate detector's
 * whole-photo pass reads a 640 px picture, so a 12 MP JPEG is decoded for it at a quarter of its size
 * (libjpeg's shrink-on-load: about 35 ms against 170 ms for every pixel). Sizes are the photo's after
 * EXIF orientation, as `decodeSource` gives them.
 */
export interface SourceLevels {
  readonly width: number;
  readonly height: number;
  readonly format: ImageType;
  /**
   * The photo at the coarsest of 1, 1/2, 1/4 and 1/8 of its size that is at least `scale` of it, decoded
   * as `decodeSource` decodes (8-bit sRGB, oriented, alpha only for PNG); each level decoded once.
   * PNG sources have no shrink-on-load and always give the whole photo.
   */
  atScale(scale: number): Promise<DecodedImage>;
}

const SHRINK_FACTORS = [8, 4, 2] as const;

/** Reads the header only (type, oriented size, pixel limit); pixels are decoded by `atScale`. */
export async function openSource(bytes: Buffer, options: DecodeOptions = {}): Promise<SourceLevels> {
  const format = sniffImageType(bytes);
  if (!format) throw new UnsupportedMediaTypeError('The file is not a JPEG, PNG or WEBP image');
  const { maxPixels = MAX_IMAGE_PIXELS } = options;
  let size: { width: number; height: number };
  try {
    const meta = await sharp(bytes, { limitInputPixels: maxPixels }).metadata();
    if (meta.width * meta.height > maxPixels) throw new Error('Input image exceeds pixel limit');
    size = meta.autoOrient;
  } catch (error) {
    throw decodeError(error, format, maxPixels);
  }
  const levels = new Map<number, Promise<DecodedImage>>();
  const decodeAt = (factor: number): Promise<DecodedImage> => {
    let level = levels.get(factor);
    if (!level) {
      level =
        factor === 1
          ? decodeSource(bytes, options)
          : decodeShrunk(bytes, format, maxPixels, {
              width: Math.ceil(size.width / factor),
              height: Math.ceil(size.height / factor),
            });
      levels.set(factor, level);
    }
    return level;
  };
  const factorFor = (scale: number): number =>
    format === 'image/png'
      ? 1
      : (SHRINK_FACTORS.find(
          (f) =>
            Math.ceil(size.width / f) >= scale * size.width &&
            Math.ceil(size.height / f) >= scale * size.height,
        ) ?? 1);
  return {
    ...size,
    format,
    atScale: (scale) => decodeAt(factorFor(scale)),
  };
}

/**
 * `decodeSource` at a smaller size: asked for exactly the shrink-on-load size, sharp decodes a JPEG at
 * 1/2, 1/4 or 1/8 scale in the IDCT (a WEBP in its decoder) and has nothing left to resample.
 */
async function decodeShrunk(
  bytes: Buffer,
  format: ImageType,
  maxPixels: number,
  size: { width: number; height: number },
): Promise<DecodedImage> {
  try {
    const { data, info } = await sharp(bytes, { autoOrient: true, limitInputPixels: maxPixels })
      .resize(size.width, size.height, { fit: 'fill' })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`decoded to ${info.channels} channels`);
    return { width: info.width, height: info.height, channels: 3, format, pixels: data };
  } catch (error) {
    throw new SourceImageError(`The ${format} file could not be decoded`, { cause: error });
  }
}

/**
 * Levels whose passes at or under a quarter of the photo all read the one quarter-size decode (the plate
 * detector's whole-photo pass of a photo 2560 px wide or more, NanoDet's and far vehicles' passes): each
 * shrink-on-load decode reads all of the file's entropy-coded data again, and an eighth-size decode of a
 * 12 MP JPEG costs most of a quarter's. `plate` and `plate_mask` read their vehicles from the same decode.
 */
export function quarterShared(levels: SourceLevels): SourceLevels {
  return { ...levels, atScale: (scale) => levels.atScale(Math.max(scale, 0.25)) };
}

/**
 * `quarterShared` levels for a step that needs the whole decode anyway: every pass over a quarter reads
 * `whole`, since a 1/2 decode for a close look would be decoding twice.
 */
export function besideWhole(levels: SourceLevels, whole: Promise<DecodedImage>): SourceLevels {
  const shared = quarterShared(levels);
  return { ...levels, atScale: (scale) => (scale <= 0.25 ? shared.atScale(scale) : whole) };
}
