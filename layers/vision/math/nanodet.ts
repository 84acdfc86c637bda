/**
 * Pre- and post-processing for NanoDet-Plus (opencv_zoo models/object_detection_nanodet, COCO 80 classes,
 * 416x416). The graph gives, per stride 8/16/32, sigmoid class scores [n,80] and DFL box distributions
 * [n,32] (four sides x 8 bins); this decodes them as opencv_zoo's demo for this file does: centre priors
 * at (col * stride + (stride - 1) / 2, row * stride + (stride - 1) / 2), each side the expectation of a
 * softmax over bins 0..7, times the stride. Without the half-cell offset every box came out shifted up and
 * left by 3.5-15.5 input pixels: 6-7% of a car's width and 11-15% of its height against the turntable's
 * boxes and the DAVIS masks (docs/quality.md, Car boxes).
 */
import { InternalError } from '#core/errors.ts';
import { type Box, boxIoU, nonMaxSuppression, type Size } from '#vision/math/geometry.ts';

export const NANODET_INPUT_SIZE = 416;
export const NANODET_STRIDES = [8, 16, 32] as const;
const REG_MAX = 7;
const BINS = REG_MAX + 1;

/** COCO's 80 detection classes in the model's (contiguous, 0-based) order: car = 2, bus = 5, truck = 7. */
export const COCO_CLASSES = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
] as const;
export const NANODET_CLASS_COUNT = COCO_CLASSES.length;

/** The classes a photographed vehicle shows up as: car, bus, truck. */
export const VEHICLE_CLASS_IDS: ReadonlySet<number> = new Set([2, 5, 7]);

export interface NanodetOutputs {
  /** Per stride (8, 16, 32): [n,80] row-major sigmoid scores. */
  readonly scores: readonly ArrayLike<number>[];
  /** Per stride: [n,32] row-major, four sides (left, top, right, bottom) x 8 bins of logits. */
  readonly boxes: readonly ArrayLike<number>[];
}

export interface ObjectCandidate {
  readonly classId: number;
  readonly score: number;
  /** In the coordinates the caller asked for (model input pixels unless `scale` was given). */
  readonly box: Box;
}

export interface NanodetDecodeOptions {
  /** opencv_zoo's demo uses 0.35; car scores on real photos are 0.46-0.75. */
  readonly scoreThreshold?: number;
  readonly iouThreshold?: number;
  readonly maxDetections?: number;
  /** Input pixels per source pixel (the letterbox scale); boxes are divided by it and clipped to `source`. */
  readonly scale?: number;
  readonly source?: Size;
  /**
   * Where a cell's prior sits: `centre` (opencv_zoo's decoding, the true boxes) or `corner`, the decoding
   * the analyze head was fitted on until it is fitted again (layers/vision/operations/analyze.ts).
   */
  readonly priors?: 'centre' | 'corner';
}

const NANODET_DEFAULT_SCORE_THRESHOLD = 0.35;

/** The centre of a cell of `stride` input pixels, from its corner: opencv_zoo's `0.5 * (stride - 1)`. */
const PRIOR_OFFSET = (stride: number) => (stride - 1) / 2;

/** The letterbox: the image scaled to fit 416x416, aspect kept, placed at the top-left. */
export function nanodetLetterbox(image: Size): { scale: number; width: number; height: number } {
  const scale = Math.min(NANODET_INPUT_SIZE / image.width, NANODET_INPUT_SIZE / image.height);
  return {
    scale,
    width: Math.max(1, Math.min(NANODET_INPUT_SIZE, Math.round(image.width * scale))),
    height: Math.max(1, Math.min(NANODET_INPUT_SIZE, Math.round(image.height * scale))),
  };
}

/** Rows of each stride's output for the 416 input: 2704, 676, 169. */
export const nanodetRowCounts = (): number[] =>
  NANODET_STRIDES.map((s) => Math.ceil(NANODET_INPUT_SIZE / s) ** 2);

/** The expected distance in bins: softmax over the 8 logits, then its mean. */
function dflDistance(logits: ArrayLike<number>, offset: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < BINS; k++) max = Math.max(max, logits[offset + k]!);
  let sum = 0;
  let weighted = 0;
  for (let k = 0; k < BINS; k++) {
    const e = Math.exp(logits[offset + k]! - max);
    sum += e;
    weighted += e * k;
  }
  return weighted / sum;
}

/**
 * Detections after the score threshold and per-class NMS (as NanoDet's multiclass NMS), best first.
 * Each anchor may yield several classes, each above the threshold on its own.
 */
export function decodeNanodet(
  outputs: NanodetOutputs,
  options: NanodetDecodeOptions = {},
): ObjectCandidate[] {
  const {
    scoreThreshold = NANODET_DEFAULT_SCORE_THRESHOLD,
    iouThreshold = 0.6,
    maxDetections = 100,
    scale = 1,
    source,
    priors = 'centre',
  } = options;
  const offset = (stride: number) => (priors === 'centre' ? PRIOR_OFFSET(stride) : 0);
  const rows = nanodetRowCounts();
  if (outputs.scores.length !== rows.length || outputs.boxes.length !== rows.length) {
    throw new InternalError(
      `NanoDet returned ${outputs.scores.length} score and ${outputs.boxes.length} box maps`,
    );
  }
  const maxX = source ? source.width : Number.POSITIVE_INFINITY;
  const maxY = source ? source.height : Number.POSITIVE_INFINITY;
  const clamp = (v: number, hi: number) => Math.min(Math.max(v, 0), hi);
  const byClass = new Map<number, ObjectCandidate[]>();
  NANODET_STRIDES.forEach((stride, level) => {
    const scores = outputs.scores[level]!;
    const boxes = outputs.boxes[level]!;
    const n = rows[level]!;
    if (scores.length !== n * NANODET_CLASS_COUNT || boxes.length !== n * 4 * BINS) {
      throw new InternalError(
        `NanoDet stride ${stride} gave ${scores.length / NANODET_CLASS_COUNT} score and ${boxes.length / (4 * BINS)} ` +
          `box rows, expected ${n}: the model file does not match this decoder`,
      );
    }
    const side = Math.ceil(NANODET_INPUT_SIZE / stride);
    for (let r = 0; r < n; r++) {
      let box: Box | undefined;
      for (let c = 0; c < NANODET_CLASS_COUNT; c++) {
        const score = scores[r * NANODET_CLASS_COUNT + c]!;
        if (!(score >= scoreThreshold)) continue;
        if (!box) {
          const cx = (r % side) * stride + offset(stride);
          const cy = Math.floor(r / side) * stride + offset(stride);
          const o = r * 4 * BINS;
          const x1 = clamp((cx - dflDistance(boxes, o) * stride) / scale, maxX);
          const y1 = clamp((cy - dflDistance(boxes, o + BINS) * stride) / scale, maxY);
          const x2 = clamp((cx + dflDistance(boxes, o + 2 * BINS) * stride) / scale, maxX);
          const y2 = clamp((cy + dflDistance(boxes, o + 3 * BINS) * stride) / scale, maxY);
          box = { x: x1, y: y1, w: x2 - x1, h: y2 - y1 };
        }
        const list = byClass.get(c) ?? [];
        list.push({ classId: c, score, box });
        byClass.set(c, list);
      }
    }
  });
  const kept: ObjectCandidate[] = [];
  for (const list of byClass.values()) {
    const keep = nonMaxSuppression(
      list.map((d) => d.box),
      list.map((d) => d.score),
      iouThreshold,
    );
    for (const i of keep) kept.push(list[i]!);
  }
  return kept.sort((a, b) => b.score - a.score).slice(0, maxDetections);
}

/** Photos whose long side is at least this are also searched tile by tile (`vehicleTiles`). */
export const TILE_MIN_SIDE = 1600;
/**
 * ... unless the whole photo shows a vehicle at least this share of its width wide: a close listing photo,
 * where four more NanoDet runs (and the looks at what they take for vehicles) cost a third of its time, and
 * the rest of the width holds no vehicle too small for the whole photo's pass. The bench's listing photos
 * show theirs 0.78 wide; the ladder's frames, a street and a car park, 0.55 and 0.57, and keep their tiles.
 */
export const TILE_SKIP_WIDTH = 0.7;
/** Each tile spans this share of the photo's width and height: neighbours overlap by a tenth of it. */
const TILE_SHARE = 0.55;
/**
 * Photos at least this long (12 MP: 4000x3000) are also searched on 3x3 finer tiles (`FINE_TILE_SHARE`):
 * there a 2x2 tile still shrinks five times, and a car with a plate 25 px high (about 400 px wide) comes
 * out under 80 px; NanoDet boxed 11 of 19 such pasted cars of the plate ladder with the whole photo and
 * 2x2 tiles, 17 with 3x3 tiles added (docs/decisions/0070-small-vehicles-on-finer-tiles.md).
 */
export const FINE_TILE_MIN_SIDE = 3000;
/**
 * A fine tile's share of each side: at 0.42 a 4000 px photo's tile is read from its quarter-size decode, and
 * neighbours overlap by 0.13 of the photo (520 px), so a car that narrow is whole in one of them.
 */
const FINE_TILE_SHARE = 0.42;
/**
 * A fine tile keeps only vehicles at most this share of the photo's width: a wider one is seen by a 2x2 tile
 * at 110 px or more, and what NanoDet boxes across most of a fine tile is seldom a vehicle (a dashboard in
 * an interior of 3000 px, whose display clock the look then took for a plate).
 */
const FINE_TILE_MAX_VEHICLE = 0.15;

/** Where NanoDet looks, and the widest vehicle (photo pixels) it keeps from there. */
export interface VehicleTile extends Box {
  readonly maxVehicleWidth: number;
}

/** `n` x `n` tiles, each `share` of the photo's sides, evenly spread from edge to edge. */
function tileGrid(photo: Size, n: number, share: number, maxVehicleWidth: number): VehicleTile[] {
  const w = photo.width * share;
  const h = photo.height * share;
  const at = (i: number, free: number) => (i * free) / (n - 1);
  return Array.from({ length: n * n }, (_, k) => ({
    x: at(k % n, photo.width - w),
    y: at(Math.floor(k / n), photo.height - h),
    w,
    h,
    maxVehicleWidth,
  }));
}

/**
 * Where NanoDet looks besides the whole photo (where it found the vehicles `seen`): 2x2 overlapping tiles
 * of a photo at least `TILE_MIN_SIDE` long, and 3x3 finer ones too from `FINE_TILE_MIN_SIDE`; none of a
 * smaller one or of a listing photo (`TILE_SKIP_WIDTH`). At 416 px a 4000 px photo shrinks ten times and a
 * van 300 px wide comes out 31 px, under what NanoDet finds; in a tile it comes out 1.8 times larger, in a
 * fine tile 2.4 times.
 */
export function vehicleTiles(photo: Size, seen: readonly Box[] = []): VehicleTile[] {
  const long = Math.max(photo.width, photo.height);
  if (long < TILE_MIN_SIDE) return [];
  if (seen.some((b) => b.w >= TILE_SKIP_WIDTH * photo.width)) return [];
  const tiles = tileGrid(photo, 2, TILE_SHARE, photo.width);
  if (long < FINE_TILE_MIN_SIDE) return tiles;
  return [...tiles, ...tileGrid(photo, 3, FINE_TILE_SHARE, FINE_TILE_MAX_VEHICLE * photo.width)];
}

/** A box this close (share of the tile's side) to an edge the tile shares with the photo's inside is cut by it. */
const CUT_MARGIN = 0.01;

/**
 * Whether `box` (photo pixels) touches an edge of `tile` that lies inside the photo: such a vehicle is cut
 * by the tile, and the overlapping tile or the whole photo sees it whole.
 */
export function cutByTile(box: Box, tile: Box, photo: Size): boolean {
  const mx = CUT_MARGIN * tile.w;
  const my = CUT_MARGIN * tile.h;
  const inner = (edge: number, limit: number) => edge > 0.5 && edge < limit - 0.5;
  return (
    (inner(tile.x, photo.width) && box.x <= tile.x + mx) ||
    (inner(tile.y, photo.height) && box.y <= tile.y + my) ||
    (inner(tile.x + tile.w, photo.width) && box.x + box.w >= tile.x + tile.w - mx) ||
    (inner(tile.y + tile.h, photo.height) && box.y + box.h >= tile.y + tile.h - my)
  );
}

/** Two vehicle boxes overlapping this much are one vehicle boxed twice (car and truck, whole and tile). */
const SAME_VEHICLE_IOU = 0.5;

/**
 * One box per vehicle, largest first, at most `max`: of boxes overlapping by `SAME_VEHICLE_IOU` or more,
 * the largest. NanoDet often boxes one vehicle as both a car and a truck, and the whole photo and a tile
 * box it twice; reading it twice finds nothing new.
 */
export function distinctVehicles(boxes: readonly Box[], max: number): Box[] {
  const sorted = [...boxes].sort((a, b) => b.w * b.h - a.w * a.h);
  const kept: Box[] = [];
  for (const box of sorted) {
    if (kept.length >= max) break;
    if (kept.every((k) => boxIoU(k, box) < SAME_VEHICLE_IOU)) kept.push(box);
  }
  return kept;
}
