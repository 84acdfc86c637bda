/**
 * Pre- and post-processing for LPD-YuNet (opencv_zoo models/license_plate_detection_yunet), following
 * its lpd_yunet.py, except that NMS here runs on each quad's bounding box: the python passes the first
 * two corners to cv.dnn.NMSBoxes as if they were x, y, w, h.
 */
import { InternalError } from '#core/errors.ts';
import {
  type Box,
  boundingBox,
  nonMaxSuppression,
  orderCornersClockwise,
  type Point,
  type Quad,
  quadBoundingBox,
  type Size,
} from '#vision/math/geometry.ts';

const MIN_SIZES: readonly (readonly number[])[] = [
  [10, 16, 24],
  [32, 48],
  [64, 96],
  [128, 192, 256],
];
const STEPS = [8, 16, 32, 64] as const;
/** Centre and corner offsets are scaled by the first, log box sizes by the second. */
const VARIANCE = [0.1, 0.2] as const;
const LOC_WIDTH = 14;
/**
 * Offsets in a loc row of the x of each corner (y follows), as lpd_yunet.py slices them: top-left,
 * top-right, bottom-right, bottom-left for an upright plate (8 is the centre).
 */
const CORNER_OFFSETS = [4, 6, 10, 12] as const;
/** Ratios of the shorter to the longer diagonal: at or above, a plate's; below the second, no direction left. */
const EQUAL_DIAGONALS = 0.9;
const DIRECTED_DIAGONAL = 0.5;

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
  /** Low, because EU plates score low in a single pass (the finder's own rule is `PLATE_RULE`). */
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
    const size = priors[r * 3 + 2]!;
    const at = (offset: number): Point => ({
      x: cx + loc[r * LOC_WIDTH + offset]! * VARIANCE[0] * size,
      y: cy + loc[r * LOC_WIDTH + offset + 1]! * VARIANCE[0] * size,
    });
    // SSD box: centre offset and log-size, the first four loc values (lpd_yunet.py leaves them unused).
    const centre = at(0);
    const w = size * Math.exp(loc[r * LOC_WIDTH + 2]! * VARIANCE[1]);
    const h = size * Math.exp(loc[r * LOC_WIDTH + 3]! * VARIANCE[1]);
    const ssdBox = { x: centre.x - w / 2, y: centre.y - h / 2, w, h };
    const [a, b, c, d] = CORNER_OFFSETS.map(at) as [Point, Point, Point, Point];
    const quad = orderCornersClockwise(repairCollapsedCorners([a, b, c, d], ssdBox));
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

/**
 * Measured on the openalpr benchmark photos: the network often pulls two opposite corners (nearly always
 * top-right and bottom-left) towards the plate's centre while the other two stay right; for 5-25% of
 * plates, most around 30-60 px wide, they land on the centre. Filling that quad leaves a large part of
 * the plate visible. A plate's diagonals are about equal, upright or in perspective (an isosceles
 * trapezoid), so the shorter diagonal is stretched about the longer one's midpoint to its length, keeping
 * its direction. When it is too short to have a direction, its ends become the corners of the box around
 * the good diagonal and the SSD box, on their side; that covers a rolled plate up to a sliver of sin² of
 * the roll, which the fill's dilation absorbs.
 */
export function repairCollapsedCorners(corners: readonly [Point, Point, Point, Point], ssdBox: Box): Quad {
  const [a, b, c, d] = corners;
  const ac = Math.hypot(c.x - a.x, c.y - a.y);
  const bd = Math.hypot(d.x - b.x, d.y - b.y);
  const ratio = Math.min(ac, bd) / Math.max(ac, bd);
  if (ratio >= EQUAL_DIAGONALS) return corners;
  const [p, q, s, t] = ac >= bd ? [a, c, b, d] : [b, d, a, c];
  let m: Point;
  let n: Point;
  if (ratio >= DIRECTED_DIAGONAL) {
    const mid = { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 };
    const k = 1 / ratio / 2;
    m = { x: mid.x + (s.x - t.x) * k, y: mid.y + (s.y - t.y) * k };
    n = { x: mid.x - (s.x - t.x) * k, y: mid.y - (s.y - t.y) * k };
  } else {
    const box = boundingBox([
      p,
      q,
      { x: ssdBox.x, y: ssdBox.y },
      { x: ssdBox.x + ssdBox.w, y: ssdBox.y + ssdBox.h },
    ]);
    const [x0, y0, x1, y1] = [box.x, box.y, box.x + box.w, box.y + box.h];
    // The replacements sit at the two box corners the good diagonal does not run towards.
    const runsDownRight = (q.x - p.x) * (q.y - p.y) >= 0;
    [m, n] = runsDownRight
      ? [
          { x: x1, y: y0 },
          { x: x0, y: y1 },
        ]
      : [
          { x: x0, y: y0 },
          { x: x1, y: y1 },
        ];
  }
  return ac >= bd ? [a, m, c, n] : [m, b, n, d];
}

export interface LpdInputSizeOptions {
  /** Wider images are scaled down to this width, chosen for recall on the openalpr benchmark photos. */
  readonly targetWidth?: number;
  /** Caps the long side of portrait images, which would otherwise cost more than the width implies. */
  readonly maxSide?: number;
  /** Both sides are rounded to a multiple of this. */
  readonly multiple?: number;
  /** Enlarge images narrower than `targetWidth` too (a close look at a crop); never for whole photos. */
  readonly upscale?: boolean;
}

/**
 * Model input size for an image: aspect ratio kept (up to the rounding), at most `targetWidth` wide and
 * `maxSide` long, sides rounded to `multiple`. Small images are not enlarged: an upscaled small photo draws
 * false plates on interiors. The dynamic graph accepts any size; rounding to 32 keeps the distortion under
 * 3% at 640 px. No side is under 64: at 32 px the graph's last
 * head still gives one row of outputs where the floor arithmetic of `lpdPriorCount` (right at 64 px and
 * above) gives none, and a thin panorama or a tiny crop failed with a 500.
 */
export function lpdInputSize(image: Size, options: LpdInputSizeOptions = {}): Size {
  const { targetWidth = 640, maxSide = 960, multiple = 32, upscale = false } = options;
  const scale = Math.min(
    upscale ? Number.POSITIVE_INFINITY : 1,
    targetWidth / image.width,
    maxSide / Math.max(image.width, image.height),
  );
  const round = (v: number) => Math.max(64, multiple, Math.round((v * scale) / multiple) * multiple);
  return { width: round(image.width), height: round(image.height) };
}
