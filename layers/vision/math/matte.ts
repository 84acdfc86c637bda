/**
 * Mask math for background replacement: turning a segmenter's soft alpha into a clean matte, deciding
 * whether it is usable, and measuring where the car stands so that a backdrop and a contact shadow can be
 * placed under it. Pure functions over 8-bit single-channel buffers; no image library.
 */
import { MaskFailedError } from '#core/errors.ts';
import type { Box } from '#vision/math/geometry.ts';

/** 8-bit alpha, row-major, one byte per pixel: 255 = foreground (the car), 0 = background. */
export interface Matte {
  readonly width: number;
  readonly height: number;
  readonly alpha: Uint8Array;
}

/** Alpha at or above this counts as foreground for coverage, boxes and components. */
export const FOREGROUND = 128;

/** Segmenter probabilities (0..1, any float) to 8-bit alpha. */
export function probabilitiesToAlpha(prob: ArrayLike<number>): Uint8Array {
  const alpha = new Uint8Array(prob.length);
  for (let i = 0; i < prob.length; i++) {
    const v = prob[i]!;
    alpha[i] = v >= 1 ? 255 : v > 0 ? Math.round(v * 255) : 0;
  }
  return alpha;
}

export interface FeatherOptions {
  /** Alpha at or below this becomes 0. */
  readonly low: number;
  /** Alpha at or above this becomes 255. */
  readonly high: number;
}

/**
 * ISNet's edge, once upscaled from 1024 px to the photo, is a ramp several source pixels wide whose outer
 * part is mostly background colour (the halo); between `low` and `high` it is re-mapped through a
 * smoothstep, so the edge keeps one or two pixels of anti-aliasing and the haze beyond it disappears.
 * Compared on eval crops (mirrors, tyres, on light and dark backdrops): without it a light fringe shows
 * around mirrors and a blur under the tyres; 64..192 and 96..224 are both clean, 128..250 begins to thin
 * the edge; the roof antennas of the eval photos survive 96..224.
 */
export const DEFAULT_FEATHER: FeatherOptions = { low: 96, high: 224 };

/** The 256-entry table for `featherAlpha`. */
export function featherTable({ low, high }: FeatherOptions = DEFAULT_FEATHER): Uint8Array {
  if (!(low >= 0 && high <= 255 && low < high)) throw new RangeError(`bad feather range ${low}..${high}`);
  const table = new Uint8Array(256);
  for (let v = 0; v < 256; v++) {
    const t = Math.min(1, Math.max(0, (v - low) / (high - low)));
    table[v] = Math.round(t * t * (3 - 2 * t) * 255);
  }
  return table;
}

/** Re-maps every alpha through the feather table, in place (the matte may be a 50 MP buffer). */
export function featherAlpha(alpha: Uint8Array, options: FeatherOptions = DEFAULT_FEATHER): void {
  const table = featherTable(options);
  for (let i = 0; i < alpha.length; i++) alpha[i] = table[alpha[i]!]!;
}

export interface SpeckOptions {
  /** Pixels above this alpha are joined into components (8-connected). */
  readonly threshold?: number;
  /** Components smaller than this share of the largest one are cleared. */
  readonly minShareOfLargest?: number;
}

/** 1 wherever a set pixel of `mask` lies within `r` (a square window, two separable passes). */
export function dilateSquare(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const pass = (src: Uint8Array, horizontal: boolean) => {
    const out = new Uint8Array(src.length);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (!src[y * w + x]) continue;
        for (let d = -r; d <= r; d++) {
          const nx = horizontal ? x + d : x;
          const ny = horizontal ? y : y + d;
          if (nx >= 0 && nx < w && ny >= 0 && ny < h) out[ny * w + nx] = 1;
        }
      }
    }
    return out;
  };
  return pass(pass(mask, true), false);
}

/**
 * 8-connected components of the pixels above `threshold`: a label per pixel (0 for none) and the size of
 * each label (index 0 unused).
 */
export function labelComponents(matte: Matte, threshold: number): { labels: Int32Array; sizes: number[] } {
  const { width, height, alpha } = matte;
  const labels = new Int32Array(width * height);
  const sizes: number[] = [0];
  const stack: number[] = [];
  for (let start = 0; start < alpha.length; start++) {
    if (labels[start] !== 0 || alpha[start]! <= threshold) continue;
    const label = sizes.length;
    let size = 0;
    labels[start] = label;
    stack.push(start);
    while (stack.length > 0) {
      const p = stack.pop()!;
      size++;
      const x = p % width;
      const y = (p - x) / width;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= width) continue;
          const q = ny * width + nx;
          if (labels[q] === 0 && alpha[q]! > threshold) {
            labels[q] = label;
            stack.push(q);
          }
        }
      }
    }
    sizes.push(size);
  }
  return { labels, sizes };
}

/**
 * Clears small islands (a hose or a sign the segmenter half-picked, dust on the lens), keeping every
 * component of at least `minShareOfLargest` of the largest: a second car in the frame stays, as the
 * segmenter's decision. Meant for the model-resolution matte (1024 x 1024): labels cost 4 bytes a pixel.
 * Returns how many pixels were cleared.
 */
export function clearSpecks(matte: Matte, options: SpeckOptions = {}): number {
  const { threshold = 32, minShareOfLargest = 0.02 } = options;
  const { alpha } = matte;
  const { labels, sizes } = labelComponents(matte, threshold);
  const largest = Math.max(0, ...sizes);
  const keep = sizes.map((s) => s >= largest * minShareOfLargest);
  let cleared = 0;
  for (let i = 0; i < alpha.length; i++) {
    const label = labels[i]!;
    // Faint pixels (at or below the threshold) belong to no component and are left as they are.
    if (label !== 0 && !keep[label]) {
      alpha[i] = 0;
      cleared++;
    }
  }
  return cleared;
}

/** Where the foreground is, in matte pixels. */
export interface MatteStats {
  readonly width: number;
  readonly height: number;
  /** Share of pixels at or above FOREGROUND. */
  readonly coverage: number;
  /** Box around the foreground pixels; null when there are none. */
  readonly box: Box | null;
  /**
   * The row the car stands on: the lowest row holding a real run of foreground (at least 1% of the box's
   * width), so that a stray pixel under the car does not lower it. Exclusive: the first row below.
   */
  readonly groundY: number;
  /** The footprint: columns (start inclusive, end exclusive) whose lowest car pixel is near `groundY`. */
  readonly footprint: { readonly x0: number; readonly x1: number } | null;
  /** Per column, the row of its lowest foreground pixel; -1 where the column has none. */
  readonly columnBottoms: Int32Array;
}

/** Share of the box height above the ground line counted as touching the floor (wheels, bumpers, sills). */
const FOOTPRINT_BAND = 0.12;

/** One pass over the matte (any resolution) plus work per row and column. */
export function matteStats(matte: Matte): MatteStats {
  const { width, height, alpha } = matte;
  const rowCount = new Uint32Array(height);
  const colBottom = new Int32Array(width).fill(-1);
  let minX = width;
  let maxX = -1;
  let count = 0;
  for (let y = 0, i = 0; y < height; y++) {
    let n = 0;
    for (let x = 0; x < width; x++, i++) {
      if (alpha[i]! >= FOREGROUND) {
        n++;
        colBottom[x] = y;
        if (x < minX) minX = x;
        if (x > maxX) maxX = x;
      }
    }
    rowCount[y] = n;
    count += n;
  }
  const coverage = count / (width * height);
  if (count === 0) {
    return { width, height, coverage, box: null, groundY: height, footprint: null, columnBottoms: colBottom };
  }
  let minY = 0;
  while (rowCount[minY] === 0) minY++;
  let maxY = height - 1;
  while (rowCount[maxY] === 0) maxY--;
  const box = { x: minX, y: minY, w: maxX - minX + 1, h: maxY - minY + 1 };
  const minRun = Math.max(1, Math.ceil(box.w * 0.01));
  let ground = maxY;
  while (ground > minY && rowCount[ground]! < minRun) ground--;
  const groundY = ground + 1;
  const bandTop = groundY - Math.max(1, FOOTPRINT_BAND * box.h);
  let x0 = -1;
  let x1 = -1;
  for (let x = minX; x <= maxX; x++) {
    if (colBottom[x]! >= bandTop) {
      if (x0 < 0) x0 = x;
      x1 = x + 1;
    }
  }
  return {
    width,
    height,
    coverage,
    box,
    groundY,
    footprint: x0 < 0 ? null : { x0, x1 },
    columnBottoms: colBottom,
  };
}

export interface CoverageLimits {
  readonly minCoverage: number;
  readonly maxCoverage: number;
}

/**
 * Below 1% the segmenter found nothing worth cutting out (a blank or abstract picture); above 98% it took
 * the whole frame, so there is no background to replace. Either way the job has no usable mask.
 */
const DEFAULT_COVERAGE_LIMITS: CoverageLimits = { minCoverage: 0.01, maxCoverage: 0.98 };

/** Whether a matte is usable and, when not, the 802 message saying why. */
export type MatteVerdict = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** The foreground must cover a plausible share of the image (`CoverageLimits`). */
export function usableMatte(
  stats: MatteStats,
  limits: CoverageLimits = DEFAULT_COVERAGE_LIMITS,
): MatteVerdict {
  const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
  if (stats.box === null || stats.coverage < limits.minCoverage) {
    return {
      ok: false,
      message: `No car or other foreground was found in the photo (mask covers ${percent(stats.coverage)} of it)`,
    };
  }
  if (stats.coverage > limits.maxCoverage) {
    return {
      ok: false,
      message:
        'The background could not be told apart from the foreground ' +
        `(mask covers ${percent(stats.coverage)} of the photo)`,
    };
  }
  return { ok: true };
}

/** MaskFailedError (802) unless the foreground covers a plausible share of the image (`usableMatte`). */
export function assertUsableMatte(stats: MatteStats, limits: CoverageLimits = DEFAULT_COVERAGE_LIMITS): void {
  const verdict = usableMatte(stats, limits);
  if (!verdict.ok) throw new MaskFailedError(verdict.message);
}

/** A soft elliptical shadow: darkest at the centre, fading to nothing at the rim. */
export interface ShadowEllipse {
  readonly cx: number;
  readonly cy: number;
  readonly rx: number;
  readonly ry: number;
  /** Opacity at the centre, 0..1. */
  readonly opacity: number;
}

/**
 * The soft shadow the body casts on the floor around it (ambient occlusion): one wide faint ellipse along
 * the footprint. It sits mostly behind the ground line, which is the floor under the car in a front or
 * rear view, so the car hides its upper part as it would a real shadow. Null when there is no footprint.
 */
export function ambientShadow(stats: MatteStats): ShadowEllipse | null {
  const { box, footprint, groundY } = stats;
  if (!box || !footprint) return null;
  const half = (footprint.x1 - footprint.x0) / 2;
  const ry = Math.max(3, 0.12 * box.h);
  return { cx: footprint.x0 + half, cy: groundY - 0.5 * ry, rx: half * 1.1, ry, opacity: 0.42 };
}

/** A small raster of shadow darkness (0..255) placed at `left`, `top` in the photo. */
export interface ShadowLayer {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
  readonly alpha: Uint8Array;
}

/**
 * The contact shadow: dark where the car meets the floor and nowhere else. Each column's darkness follows
 * how close its lowest foreground pixel is to the ground line (tyres touch it, the sill between them does
 * not), spread sideways a little past the tyres; down the rows it is a narrow bell centred just behind the
 * ground line. This is what makes the car stand rather than float: an ellipse alone is faintest at its
 * ends, which is exactly where the wheels are. Null when there is no footprint.
 */
export function contactShadow(stats: MatteStats, opacity = 0.75): ShadowLayer | null {
  const { box, footprint, groundY, columnBottoms, width: imageWidth, height: imageHeight } = stats;
  if (!box || !footprint) return null;
  const band = Math.max(1, 0.05 * box.h);
  const spread = Math.max(1, Math.round(0.02 * box.w));
  const sigma = Math.max(1, 0.018 * box.h);
  const centre = groundY - 0.6 * sigma;
  const left = Math.max(0, Math.floor(footprint.x0 - 2 * spread));
  const right = Math.min(imageWidth, Math.ceil(footprint.x1 + 2 * spread));
  const top = Math.max(0, Math.floor(centre - 3 * sigma));
  const bottom = Math.min(imageHeight, Math.ceil(centre + 3 * sigma));
  const width = right - left;
  const height = bottom - top;
  if (width < 1 || height < 1) return null;
  const touch = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const b = columnBottoms[left + x]!;
    touch[x] = b < 0 ? 0 : Math.min(1, Math.max(0, 1 - (groundY - 1 - b) / band));
  }
  // Box blur twice over `spread`: about a Gaussian, so the shadow runs a little past each tyre.
  const profile = boxBlur(boxBlur(touch, spread), spread);
  const alpha = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const dy = (top + y + 0.5 - centre) / sigma;
    const row = Math.exp(-0.5 * dy * dy) * opacity * 255;
    for (let x = 0; x < width; x++) alpha[y * width + x] = Math.round(row * profile[x]!);
  }
  return { left, top, width, height, alpha };
}

function boxBlur(values: Float32Array, radius: number): Float32Array {
  const out = new Float32Array(values.length);
  let sum = 0;
  const n = values.length;
  const at = (i: number) => (i >= 0 && i < n ? values[i]! : 0);
  for (let i = -radius; i <= radius; i++) sum += at(i);
  for (let i = 0; i < n; i++) {
    out[i] = sum / (2 * radius + 1);
    sum += at(i + radius + 1) - at(i - radius);
  }
  return out;
}

/**
 * Row of the backdrop's horizon, where floor meets wall. A camera at about the car's height sees the far
 * wall's foot between the car's ground line and its roof: 42% of the car's height above the ground line
 * puts it behind the lower body, as in studio shots. Kept inside the frame and at least 6% of the car's
 * height above its wheels, so the car always stands on floor.
 */
export function horizonRow(stats: MatteStats): number {
  const { height, box, groundY } = stats;
  if (!box) return Math.round(height * 0.62);
  const wanted = groundY - 0.42 * box.h;
  const lowest = groundY - 0.06 * box.h;
  return Math.max(0, Math.round(Math.min(lowest, Math.max(height * 0.2, Math.min(height * 0.85, wanted)))));
}
