import sharp from 'sharp';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Box, Size } from '#vision/math/geometry.ts';
import type { Matte } from '#vision/math/matte.ts';
import type { Placement } from '#vision/math/placement.ts';

/**
 * The car moved into its place in a frame (`framing: center`; the photo's size unless given): the car's
 * region of the photo and of the matte is scaled by libvips (Lanczos for the pixels, cubic for the matte)
 * and copied to where the placement puts it. Everything outside it is background (matte 0), which the
 * backdrop or transparency fills, so the rest of the photo is never resampled.
 */
export async function reframe(
  image: DecodedImage,
  matte: Matte,
  region: Box,
  placement: Placement,
  frame: Size = image,
): Promise<{ image: DecodedImage; matte: Matte }> {
  const [pixels, alpha] = await Promise.all([
    move(image.pixels, image, image.channels, region, placement, 'lanczos3', frame),
    moveMatte(matte, region, placement, frame),
  ]);
  return { image: { ...image, width: frame.width, height: frame.height, pixels }, matte: alpha };
}

/** A matte (the car's, the plates') moved as `reframe` moves the car; 0 outside the moved region. */
export async function moveMatte(
  matte: Matte,
  region: Box,
  placement: Placement,
  frame: Size = matte,
): Promise<Matte> {
  const moved = await move(
    Buffer.from(matte.alpha.buffer, matte.alpha.byteOffset, matte.alpha.length),
    matte,
    1,
    region,
    placement,
    'cubic',
    frame,
  );
  return {
    width: frame.width,
    height: frame.height,
    alpha: new Uint8Array(moved.buffer, moved.byteOffset, moved.length),
  };
}

async function move(
  data: Buffer,
  size: Size,
  channels: number,
  region: Box,
  placement: Placement,
  kernel: 'lanczos3' | 'cubic',
  frame: Size,
): Promise<Buffer> {
  const { width, height } = size;
  // The region in whole pixels, with a pixel of margin for the resampling kernels.
  const x0 = Math.max(0, Math.floor(region.x) - 1);
  const y0 = Math.max(0, Math.floor(region.y) - 1);
  const x1 = Math.min(width, Math.ceil(region.x + region.w) + 1);
  const y1 = Math.min(height, Math.ceil(region.y + region.h) + 1);
  const w = Math.max(1, Math.round((x1 - x0) * placement.scale));
  const h = Math.max(1, Math.round((y1 - y0) * placement.scale));
  const left = Math.round(x0 * placement.scale + placement.dx);
  const top = Math.round(y0 * placement.scale + placement.dy);
  let pipeline = sharp(data, { raw: { width, height, channels: channels as 1 | 3 | 4 } })
    .extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 })
    .resize(w, h, { fit: 'fill', kernel });
  // libvips gives one channel back as sRGB unless told it is grey.
  if (channels === 1) pipeline = pipeline.toColourspace('b-w');
  const scaled = await pipeline.raw().toBuffer({ resolveWithObject: true });
  if (scaled.info.channels !== channels) throw new Error(`moved to ${scaled.info.channels} channels`);
  const out = Buffer.alloc(frame.width * frame.height * channels);
  // Row by row, clipped to the frame: a car placed partly outside it (never by `centerPlacement`) is cut.
  const cx0 = Math.max(0, left);
  const cx1 = Math.min(frame.width, left + w);
  if (cx1 <= cx0) return out;
  for (let y = Math.max(0, top); y < Math.min(frame.height, top + h); y++) {
    const from = ((y - top) * w + (cx0 - left)) * channels;
    scaled.data.copy(out, (y * frame.width + cx0) * channels, from, from + (cx1 - cx0) * channels);
  }
  return out;
}

/**
 * The car alone as RGBA: its pixels with the matte (times the source's own alpha) as alpha; where the
 * matte is empty, black at the darkness of `shadow` (the floor shadow, if any), so the shadow falls on
 * whatever the user puts behind the cut-out. Colour under a partial alpha stays the photo's
 * (unassociated alpha, as PNG and WEBP store it).
 */
export function cutOut(image: DecodedImage, matte: Matte, shadow: Uint8Array | null): DecodedImage {
  const { width, height, channels, pixels } = image;
  const n = width * height;
  const out = Buffer.alloc(n * 4);
  const alpha = matte.alpha;
  for (let p = 0, o = 0, q = 0; p < n; p++, o += channels, q += 4) {
    let a = alpha[p]!;
    if (channels === 4) a = Math.round((a * pixels[o + 3]!) / 255);
    const s = shadow ? shadow[p]! : 0;
    // Car over shadow: alpha adds up, colour is the car's share of the (black) shadow's.
    const total = a + Math.round((s * (255 - a)) / 255);
    out[q + 3] = total;
    if (total === 0) continue;
    for (let c = 0; c < 3; c++) out[q + c] = Math.round((pixels[o + c]! * a) / total);
  }
  return { width, height, channels: 4, format: 'image/png', pixels: out };
}
