/** LPD-YuNet's input: a region of a decoded photo, resized (and mirrored) into the network's tensor. */
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Box, Size } from '#vision/math/geometry.ts';

/** Whole pixels inside the image, at least one a side. */
export function clipRegion(region: Box, image: Size): Box {
  const x = Math.min(Math.max(0, Math.floor(region.x)), image.width - 1);
  const y = Math.min(Math.max(0, Math.floor(region.y)), image.height - 1);
  const w = Math.max(1, Math.min(image.width, Math.ceil(region.x + region.w)) - x);
  const h = Math.max(1, Math.min(image.height, Math.ceil(region.y + region.h)) - y);
  return { x, y, w, h };
}

/** Resized, BGR, float 0..255, NCHW: what lpd_yunet.py feeds through cv.dnn.blobFromImage. */
export async function toInputTensor(
  image: DecodedImage,
  size: Size,
  region: Box | undefined,
  mirror: boolean,
): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  const source = sharp(pixels, { raw: { width, height, channels } });
  if (region) source.extract({ left: region.x, top: region.y, width: region.w, height: region.h });
  if (mirror) source.flop();
  const rgb = await source.removeAlpha().resize(size.width, size.height, { fit: 'fill' }).raw().toBuffer();
  const plane = size.width * size.height;
  const data = new Float32Array(plane * 3);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    data[p] = rgb[i + 2]!;
    data[plane + p] = rgb[i + 1]!;
    data[2 * plane + p] = rgb[i]!;
  }
  return new ort.Tensor('float32', data, [1, 3, size.height, size.width]);
}
