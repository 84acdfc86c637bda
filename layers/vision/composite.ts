import type { DecodedImage } from '#vision/image-io.ts';
import type { Matte } from '#vision/math/matte.ts';

export interface CompositeOptions {
  /**
   * Amplitude of the noise added to backdrop pixels (in 8-bit steps, 0 for none). Drawn gradients span
   * a few dozen levels over thousands of rows; without noise their steps show as bands after JPEG.
   */
  readonly dither?: number;
}

/**
 * Puts the photo's foreground over `backdrop` (interleaved RGB at the photo's size), writing into
 * `image.pixels` in place: no third full-size buffer, and where the matte is 255 (and the source opaque)
 * the photo's bytes are never written, so the car's pixels stay exactly as decoded. A 4-channel image
 * comes out opaque: its transparency counted as background.
 */
export function compositeOver(
  image: DecodedImage,
  matte: Matte,
  backdrop: Uint8Array,
  options: CompositeOptions = {},
): void {
  const { width, height, channels, pixels } = image;
  if (matte.width !== width || matte.height !== height) {
    throw new RangeError(`matte ${matte.width}x${matte.height} for an image ${width}x${height}`);
  }
  if (backdrop.length !== width * height * 3) throw new RangeError('backdrop size does not match the image');
  const alpha = matte.alpha;
  const grain = options.dither ? grainTable(options.dither) : null;
  const n = width * height;
  for (let p = 0, o = 0, b = 0; p < n; p++, o += channels, b += 3) {
    let a = alpha[p]!;
    if (channels === 4) {
      const sa = pixels[o + 3]!;
      if (sa !== 255) a = Math.round((a * sa) / 255);
      pixels[o + 3] = 255;
    }
    if (a === 255) continue;
    // Integer arithmetic throughout: this loop visits every pixel of photos up to 50 MP.
    const g = grain ? grain[(p * 7919) & GRAIN_MASK]! : 0;
    for (let c = 0; c < 3; c++) {
      const bg = backdrop[b + c]! + g;
      const v = a === 0 ? bg : bg + Math.round(((pixels[o + c]! - bg) * a) / 255);
      pixels[o + c] = v < 0 ? 0 : Math.min(v, 255);
    }
  }
}

const GRAIN_MASK = 0xffff;
const grainTables = new Map<number, Int8Array>();

/**
 * 64 Ki integer offsets with a triangular distribution of the given amplitude, drawn once (xorshift32,
 * fixed seed: the same photo always gets the same grain) and read with a prime stride so no pattern shows.
 */
function grainTable(amplitude: number): Int8Array {
  let table = grainTables.get(amplitude);
  if (!table) {
    table = new Int8Array(GRAIN_MASK + 1);
    let seed = 0x9e3779b9;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 4294967296;
    };
    for (let i = 0; i < table.length; i++) table[i] = Math.round((next() - next()) * amplitude);
    grainTables.set(amplitude, table);
  }
  return table;
}
