import sharp from 'sharp';
import type { DecodedImage } from '#vision/image-io.ts';
import {
  type GuidedCoefficients,
  guidedCoefficients,
  lumaOf,
  sampleCoefficients,
} from '#vision/math/guided-filter.ts';
import { dilateSquare, type FeatherOptions, featherTable, type Matte } from '#vision/math/matte.ts';

export interface RefineOptions {
  /** Longer side of the copy the coefficients are fitted on (the fast guided filter's reduced size). */
  readonly workSide: number;
  /** Window radius at that size. */
  readonly radius: number;
  /** Ridge of the fit, in squared luma (0..1): lower follows fainter edges of the photo. */
  readonly eps: number;
  /** The refined band is re-mapped through this smoothstep, as the plain upscale is (`featherAlpha`). */
  readonly feather: FeatherOptions;
}

/**
 * Chosen on ../shared/eval/extra/masks-davis leave-one-clip-out (docs/quality.md, Edges at full resolution):
 * every one of the six folds chose radius 2 with a feather centred at 144 (80..208) in the band, a little
 * below the plain upscale's 160, so the edge sits on the photo's own and IoU and boundary F both rise on every
 * held-out clip. Wider windows or a softer feather grew the car into similar-coloured background.
 */
export const DEFAULT_REFINE: RefineOptions = {
  workSide: 1024,
  radius: 2,
  eps: 1e-3,
  feather: { low: 80, high: 208 },
};

/**
 * The model's matte brought to the photo's size along the photo's own edges (the fast guided filter):
 * 1. the matte and the photo's luma at `workSide` (the matte's own resolution);
 * 2. the guided filter's coefficients fitted there;
 * 3. at full size, inside the uncertain band (where the window's mean of the matte is neither 0 nor 1),
 *    alpha = a * luma + b with the coefficients sampled bilinearly, then feathered; elsewhere the plain
 *    upscale (`coarse`), so solid car stays solid and the background stays clear.
 * Memory: a few float planes at `workSide` (about 12 MB) and nothing at full size but the output matte.
 */
export async function refineMatte(
  small: Matte,
  whole: DecodedImage,
  coarse: Matte,
  options: RefineOptions = DEFAULT_REFINE,
): Promise<Matte> {
  const { width, height } = whole;
  if (coarse.width !== width || coarse.height !== height) throw new RangeError('coarse matte size differs');
  const scale = Math.min(1, options.workSide / Math.max(width, height));
  const w = Math.max(1, Math.round(width * scale));
  const h = Math.max(1, Math.round(height * scale));
  const [guideBytes, matteBytes] = await Promise.all([
    sharp(whole.pixels, { raw: { width, height, channels: whole.channels } })
      .resize(w, h, { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true }),
    sharp(small.alpha, { raw: { width: small.width, height: small.height, channels: 1 } })
      .resize(w, h, { fit: 'fill', kernel: 'cubic' })
      .toColourspace('b-w')
      .raw()
      .toBuffer(),
  ]);
  const guide = lumaOf(guideBytes.data, guideBytes.info.channels, w * h);
  const p = new Float32Array(w * h);
  for (let i = 0; i < p.length; i++) p[i] = matteBytes[i]! / 255;
  const coefficients = guidedCoefficients(guide, p, w, h, options.radius, options.eps);
  const band = uncertainBand(p, w, h, options.radius);
  return { width, height, alpha: applyAtFullSize(whole, coarse, coefficients, band, options.feather) };
}

/** 1 where the window around a pixel holds both car and background at the working size, dilated once. */
function uncertainBand(p: Float32Array, w: number, h: number, r: number): Uint8Array {
  const edge = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = p[y * w + x]!;
      if (v > 0.02 && v < 0.98) edge[y * w + x] = 1;
      else if (x + 1 < w && Math.abs(p[y * w + x + 1]! - v) > 0.5) edge[y * w + x] = 1;
      else if (y + 1 < h && Math.abs(p[(y + 1) * w + x]! - v) > 0.5) edge[y * w + x] = 1;
    }
  }
  // Grown by the radius: the band the filter may move the edge within.
  return dilateSquare(edge, w, h, r);
}

function applyAtFullSize(
  whole: DecodedImage,
  coarse: Matte,
  c: GuidedCoefficients,
  band: Uint8Array,
  feather: FeatherOptions,
): Uint8Array {
  const { width, height, channels, pixels } = whole;
  const out = Uint8Array.from(coarse.alpha);
  const table = featherTable(feather);
  const sample = sampleCoefficients(c, width, height);
  const ab = new Float64Array(2);
  const sx = c.width / width;
  const sy = c.height / height;
  for (let y = 0; y < height; y++) {
    const by = Math.min(c.height - 1, Math.floor((y + 0.5) * sy));
    for (let x = 0; x < width; x++) {
      const bx = Math.min(c.width - 1, Math.floor((x + 0.5) * sx));
      if (!band[by * c.width + bx]) continue;
      const i = y * width + x;
      const o = i * channels;
      const luma = (0.299 * pixels[o]! + 0.587 * pixels[o + 1]! + 0.114 * pixels[o + 2]!) / 255;
      sample(x, y, ab);
      const q = ab[0]! * luma + ab[1]!;
      out[i] = table[q <= 0 ? 0 : q >= 1 ? 255 : Math.round(q * 255)]!;
    }
  }
  return out;
}
