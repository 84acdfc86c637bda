/**
 * Pre- and post-processing for LPD-YuNet (opencv_zoo models/license_plate_detection_yunet), following
 * its lpd_yunet.py, except that NMS here runs on each quad's bounding box: the python passes the first
 * two corners to cv.dnn.NMSBoxes as if they were x, y, w, h.
 */
import { InternalError } from '#core/errors.ts';
import { type Box, nonMaxSuppression, orderCornersClockwise, type Quad, quadBoundingBox, type Size } from '#core/vision/geometry.ts';

const MIN_SIZES: readonly (readonly number[])[] = [[10, 16, 24], [32, 48], [64, 96], [128, 192, 256]];
const STEPS = [8, 16, 32, 64] as const;
const VARIANCE = 0.1;
const LOC_WIDTH = 14;
/** Offsets in a loc row of the x of each corner (y follows), as lpd_yunet.py slices them. */
const CORNER_OFFSETS = [4, 6, 10, 12] as const;

/** Feature-map sizes of the four heads, floored exactly as the network (and the python) does. */
function featureMaps(size: Size): [number, number][] {
  let h = Math.floor(Math.floor((size.height + 1) / 2) / 2);
  let w = Math.floor(Math.floor((size.width + 1) / 2) / 2);
  return STEPS.map(() => {
    h = Math.floor(h / 2);
    w = Math.floor(w / 2);
    return [h, w];
  });
}

export function lpdPriorCount(input: Size): number {
  return featureMaps(input).reduce((n, [h, w], k) => n + h * w * MIN_SIZES[k]!.length, 0);
}

/**
 * Priors in input pixels, three floats each: centre x, centre y, size. Same order as the network's
 * output rows: head, then row, then column, then min size.
 */
export function lpdPriors(input: Size): Float32Array {
  const priors = new Float32Array(lpdPriorCount(input) * 3);
  let o = 0;
  featureMaps(input).forEach(([fh, fw], k) => {
    const step = STEPS[k]!;
    for (let i = 0; i < fh; i++) {
      for (let j = 0; j < fw; j++) {
        for (const minSize of MIN_SIZES[k]!) {
          priors[o++] = (j + 0.5) * step;
          priors[o++] = (i + 0.5) * step;
          priors[o++] = minSize;
        }
      }
    }
  });
  return priors;
}

export interface LpdOutputs {
  /** [n, 14] row-major. */
  readonly loc: ArrayLike<number>;
  /** [n, 2] row-major, softmax already applied by the graph. */
  readonly conf: ArrayLike<number>;
  /** [n, 1]. */
  readonly iou: ArrayLike<number>;
}

export interface LpdDecodeOptions {
  /** EU plates score low: 0.5 loses about a quarter of them, 0.3 keeps recall above 0.95. */
  readonly scoreThreshold?: number;
  readonly nmsThreshold?: number;
  readonly maxDetections?: number;
}

export interface LpdCandidate {
  /** In model-input pixels, corners ordered top-left, top-right, bottom-right, bottom-left. */
  readonly quad: Quad;
  readonly box: Box;
  readonly score: number;
}

export const LPD_DEFAULT_SCORE_THRESHOLD = 0.3;

/** Turns raw outputs into scored quads (model-input pixels), after score threshold and NMS. */
export function decodeLpdYunet(
  outputs: LpdOutputs,
  priors: Float32Array,
  options: LpdDecodeOptions = {},
): LpdCandidate[] {
  const { scoreThreshold = LPD_DEFAULT_SCORE_THRESHOLD, nmsThreshold = 0.3, maxDetections = 50 } = options;
  const n = priors.length / 3;
  const { loc, conf, iou } = outputs;
  if (loc.length !== n * LOC_WIDTH || conf.length !== n * 2 || iou.length !== n) {
    throw new InternalError(
      `LPD-YuNet returned ${loc.length / LOC_WIDTH} loc, ${conf.length / 2} conf and ${iou.length} iou rows ` +
        `but the input size implies ${n} priors: the model file does not match this decoder`,
    );
  }
  const candidates: LpdCandidate[] = [];
  for (let r = 0; r < n; r++) {
    const score = Math.sqrt(conf[r * 2 + 1]! * Math.min(Math.max(iou[r]!, 0), 1));
    if (!(score >= scoreThreshold)) continue;
    const cx = priors[r * 3]!;
    const cy = priors[r * 3 + 1]!;
    const spread = priors[r * 3 + 2]! * VARIANCE;
    const [a, b, c, d] = CORNER_OFFSETS.map((off) => ({
      x: cx + loc[r * LOC_WIDTH + off]! * spread,
      y: cy + loc[r * LOC_WIDTH + off + 1]! * spread,
    })) as [Quad[0], Quad[1], Quad[2], Quad[3]];
    const quad = orderCornersClockwise([a, b, c, d]);
    candidates.push({ quad, box: quadBoundingBox(quad), score });
  }
  const kept = nonMaxSuppression(
    candidates.map((c) => c.box),
    candidates.map((c) => c.score),
    nmsThreshold,
    maxDetections,
  );
  return kept.map((i) => candidates[i]!);
}

export interface LpdInputSizeOptions {
  /** Width the image is scaled to; 640 gave recall 0.95-0.98 on the openalpr benchmark photos. */
  readonly targetWidth?: number;
  /** Caps the height of portrait images, which would otherwise cost more than the width implies. */
  readonly maxSide?: number;
  /** Both sides are rounded to a multiple of this. */
  readonly multiple?: number;
}

/**
 * Model input size for an image: aspect ratio kept (up to the rounding), width `targetWidth`, sides
 * rounded to `multiple`. The dynamic graph accepts any size and its row count always matches the priors,
 * but only sizes divisible by the deepest stride (64) keep every head's grid aligned with the image.
 */
export function lpdInputSize(image: Size, options: LpdInputSizeOptions = {}): Size {
  const { targetWidth = 640, maxSide = 960, multiple = 32 } = options;
  const scale = Math.min(targetWidth / image.width, maxSide / Math.max(image.width, image.height));
  const round = (v: number) => Math.max(multiple, Math.round((v * scale) / multiple) * multiple);
  return { width: round(image.width), height: round(image.height) };
}
