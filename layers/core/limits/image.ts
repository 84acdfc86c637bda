import {
  BadRequestError,
  PayloadTooLargeError,
  type ServiceError,
  UnsupportedMediaTypeError,
} from '../errors.ts';
import { type ImageHeader, readImageHeader } from '../images.ts';

/** Decoded pixels of a source or background image, read from its header before anything is stored. */
export const MAX_IMAGE_PIXELS = 64_000_000;

/** Longest side (WEBP cannot exceed 16,383; a JPEG could claim 65,535). */
export const MAX_IMAGE_SIDE = 16_384;

/** Shortest side: below this no model sees a car, a plate or a background. */
export const MIN_IMAGE_SIDE = 32;

/** Long side over short side: a sliver of a photo is not a car photo. */
export const MAX_IMAGE_ASPECT = 16;

/** Animated images are refused: one frame is processed, and which one would be a guess. */
export const MAX_IMAGE_FRAMES = 1;

const n = (value: number) => value.toLocaleString('en-US');

/**
 * Why an image may not become a job, decided from its header alone (no decode, nothing stored yet), or
 * null when it may. `field` names the image in the message (`file`, `url`, `background_file`, an entry).
 * A header that cannot be read is left to the decoder: the job then fails with 400 and is charged
 * nothing, as any undecodable photo (and the decoder refuses past the same pixel limit).
 */
export function imageProblem(bytes: Uint8Array, field: string): ServiceError | null {
  const header = readImageHeader(bytes);
  return header ? limitProblem(header, field) : null;
}

function limitProblem({ width, height, frames }: ImageHeader, field: string): ServiceError | null {
  const size = `${n(width)}×${n(height)}`;
  if (frames > MAX_IMAGE_FRAMES) {
    return new UnsupportedMediaTypeError(
      `${field} is an animated image (limit: ${MAX_IMAGE_FRAMES} frame); send a still photo`,
    );
  }
  if (Math.max(width, height) > MAX_IMAGE_SIDE) {
    return new PayloadTooLargeError(`${field} is ${size} px (limit: ${n(MAX_IMAGE_SIDE)} px a side)`);
  }
  if (width * height > MAX_IMAGE_PIXELS) {
    return new PayloadTooLargeError(
      `${field} is ${size} = ${n(width * height)} pixels (limit: ${n(MAX_IMAGE_PIXELS)} pixels)`,
    );
  }
  if (Math.min(width, height) < MIN_IMAGE_SIDE) {
    return new BadRequestError(`${field} is ${size} px (limit: at least ${MIN_IMAGE_SIDE} px a side)`);
  }
  if (Math.max(width, height) / Math.min(width, height) > MAX_IMAGE_ASPECT) {
    return new BadRequestError(`${field} is ${size} px (limit: aspect ratio ${MAX_IMAGE_ASPECT}:1)`);
  }
  return null;
}
