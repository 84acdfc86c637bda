/**
 * Where a plate may be, before anything confirms it: the detector's passes over a pyramid of the photo
 * (the whole photo, the photo shrunk for close-ups, each car for far plates), best first, one per place.
 * plate-detector.ts runs the network and confirms them (close looks, text).
 */
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { SourceLevels } from '#vision/image-io.ts';
import { type Box, boxIoU, type Quad, type Size } from '#vision/math/geometry.ts';
import { type LpdInputSizeOptions, lpdInputSize } from '#vision/math/lpd-yunet.ts';
import { VEHICLE_CLASS_IDS } from '#vision/math/nanodet.ts';
import {
  CAR_LOOKS,
  CAR_MIN_SCORE,
  CAR_MIN_ZOOM,
  CLOSE_UP_MAX_WIDTH,
  CLOSE_UP_MIN_WIDTH,
  MAX_PROPOSALS,
  outsideShare,
  PLATE_RULE,
  PROPOSAL_FLOOR,
  type TextEvidence,
} from '#vision/math/plate-evidence.ts';

/** A plate in source-image pixels. */
export interface PlateDetection {
  readonly quad: Quad;
  readonly box: Box;
  readonly score: number;
  /** The plate-shaped text line that confirmed it, when text did: the fill covers it too. */
  readonly text?: TextEvidence;
  /** The plate's whole text where the detector boxed part of it: the fill covers it too. */
  readonly line?: Box;
}

export interface DetectOptions extends LpdInputSizeOptions {
  readonly scoreThreshold?: number;
  /** Look only inside this part of the image (source pixels); quads still come in source pixels. */
  readonly region?: Box;
  /** Look at the mirror image (test-time flip); quads still come in source pixels. */
  readonly mirror?: boolean;
}

/**
 * One pass of the detector on the photo's decode at `scale` of its size (`SourceLevels.atScale`): regions
 * come and quads go in the photo's pixels.
 */
export type PlatePass = (scale: number, options: DetectOptions) => Promise<PlateDetection[]>;

/** Two vehicle boxes overlapping this much are one vehicle boxed twice. */
const SAME_VEHICLE_IOU = 0.7;

export interface PlateProposals {
  /** At most `MAX_PROPOSALS + CAR_LOOKS`, best score first, no two on one place (IoU under 0.5). */
  readonly proposals: PlateDetection[];
  /** The cars looked inside, largest first; none without a car detector. */
  readonly cars: Box[];
}

/**
 * The pyramid: the whole photo as the detector's usual input (`wholeInput`); at half its sides (close-ups,
 * a plate up to 90% of the width comes out under half the input wide); and each car NanoDet finds that is
 * not already large in the photo, read at up to 640 px (a far plate, 15 px high in a 12 MP photo, comes
 * out 2-3 times larger).
 */
export async function proposePlates(
  pass: PlatePass,
  levels: SourceLevels,
  wholeInput: Size,
  carDetector?: ObjectDetector,
): Promise<PlateProposals> {
  const photo = { width: levels.width, height: levels.height };
  const whole = { scoreThreshold: PROPOSAL_FLOOR };
  const wholeScale = levelScale(photo, wholeInput);
  const proposals = [...(await pass(wholeScale, whole))];
  // Close-ups: the photo at half the input's sides, so that a plate spanning most of it comes out at the
  // sizes the detector was trained on. (It was once padded grey to the whole input: the same pixels for
  // four times the work, plus boxes drawn along the border.)
  const shrunk = await pass(wholeScale, {
    ...whole,
    targetWidth: wholeInput.width / 2,
    maxSide: Math.max(wholeInput.width, wholeInput.height) / 2,
  });
  // A plate spans at most 90% of the width (the closest close-up is 80%): wider boxes are not plates.
  const closeUps = shrunk.filter(
    (d) =>
      d.box.w >= CLOSE_UP_MIN_WIDTH * photo.width &&
      d.box.w <= CLOSE_UP_MAX_WIDTH * photo.width &&
      outsideShare(d.box, photo) <= PLATE_RULE.maxOutside,
  );
  proposals.push(...closeUps.slice(0, 2));
  const cars = carDetector ? await findCars(carDetector, levels, photo) : [];
  const wholeInputScale = wholeInput.width / photo.width;
  for (const car of cars) {
    const region = { x: car.x, y: car.y, w: car.w, h: car.h };
    const look = { targetWidth: 640, maxSide: 640, upscale: true, scoreThreshold: PROPOSAL_FLOOR, region };
    // A car that fills most of the photo is seen nearly as large by the whole-photo pass: its plate is
    // already proposed there, and reading it again costs a pass (and often the whole decode) for nothing.
    const inputScale = lpdInputSize({ width: region.w, height: region.h }, look).width / region.w;
    if (inputScale < CAR_MIN_ZOOM * wholeInputScale) continue;
    // A quarter-size decode or the whole photo, never the half: `plate` and the background operations read
    // the whole decode wherever a quarter is not enough (`besideWhole`) and `plate_mask` reads the coarsest
    // that is; on one level both find the same plates.
    const scale = Math.min(1, 640 / region.w);
    proposals.push(...(await pass(scale <= 0.25 ? scale : 1, look)).slice(0, 2));
  }
  const unique: PlateDetection[] = [];
  for (const p of proposals.sort((a, b) => b.score - a.score))
    if (unique.every((u) => boxIoU(u.box, p.box) < 0.5)) unique.push(p);
  return { proposals: unique.slice(0, MAX_PROPOSALS + CAR_LOOKS), cars };
}

/**
 * Vehicles NanoDet finds, at least `CAR_MIN_SCORE`, largest first, at most `CAR_LOOKS`, one box per
 * vehicle: NanoDet often boxes one vehicle as both a car and a truck, and reading it twice finds nothing new.
 */
async function findCars(carDetector: ObjectDetector, levels: SourceLevels, photo: Size): Promise<Box[]> {
  const level = await levels.atScale(416 / Math.max(photo.width, photo.height));
  const s = photo.width / level.width;
  const found = await carDetector.detect(level, { scoreThreshold: CAR_MIN_SCORE });
  const boxes = found
    .filter((o) => VEHICLE_CLASS_IDS.has(o.classId))
    .map((o) => ({ x: o.box.x * s, y: o.box.y * s, w: o.box.w * s, h: o.box.h * s }))
    .sort((a, b) => b.w * b.h - a.w * a.h);
  const distinct: Box[] = [];
  for (const box of boxes)
    if (distinct.every((kept) => boxIoU(kept, box) < SAME_VEHICLE_IOU)) distinct.push(box);
  return distinct.slice(0, CAR_LOOKS);
}

/** The scale of the photo (share of its width and height) a pass whose input is `input` needs. */
function levelScale(photo: Size, input: Size): number {
  return Math.min(1, Math.max(input.width / photo.width, input.height / photo.height));
}
