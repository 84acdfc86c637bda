import {
  BadRequestError,
  PayloadTooLargeError,
  type ServiceError,
  UnsupportedMediaTypeError,
} from './errors.ts';
import { type ImageHeader, readImageHeader } from './images.ts';
import {
  MAX_IMAGE_ASPECT,
  MAX_IMAGE_FRAMES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  MIN_IMAGE_SIDE,
} from './limits.ts';

const n = (value: number) => value.toLocaleString('en-US');

/**
 * Why an image may not become a job, decided from its header alone (no decode, nothing stored yet), or
 * null when it may. `field` names the image in the message (`file`, `url`, `background_file`, an entry).
 * A header that cannot be read is left to the decoder: the job then fails with 400 and is charged
 * nothing, as any undecodable photo (and the decoder keeps its own pixel limit).
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
