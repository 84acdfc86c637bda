/**
 * Where a plate may be, before anything confirms it: the detector's passes over a pyramid of the photo
 * (the whole photo, the photo shrunk for close-ups, each car for far plates), best first, one per place.
 * plate-detector.ts runs the network and confirms them (close looks, text).
 */
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { SourceLevels } from '#vision/image-io.ts';
import { type Box, boxIoU, type Quad, type Size } from '#vision/math/geometry.ts';
import { type LpdInputSizeOptions, lpdInputSize } from '#vision/math/lpd-yunet.ts';
import {
  cutByTile,
  distinctVehicles,
  NANODET_INPUT_SIZE,
  VEHICLE_CLASS_IDS,
  vehicleTiles,
} from '#vision/math/nanodet.ts';
import {
  CAR_LOOK_WIDTH,
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

export interface PlateProposals {
  /** At most `MAX_PROPOSALS` plus two a vehicle read, best score first, no two on one place (IoU under 0.5). */
  readonly proposals: PlateDetection[];
  /** The vehicles NanoDet found, largest first; none without a car detector. */
  readonly cars: Box[];
}

/**
 * The pyramid: the whole photo as the detector's usual input (`wholeInput`); at half its sides (close-ups,
 * a plate up to 90% of the width comes out under half the input wide); and every vehicle NanoDet finds
 * that is not already large in the photo, read `CAR_LOOK_WIDTH` wide from the decode that holds it (a far
 * plate, 15 px high in a 12 MP photo, comes out 2-3 times larger).
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
  let read = 0;
  for (const car of cars) {
    const region = { x: car.x, y: car.y, w: car.w, h: car.h };
    const look = {
      targetWidth: CAR_LOOK_WIDTH,
      maxSide: CAR_LOOK_WIDTH,
      upscale: true,
      scoreThreshold: PROPOSAL_FLOOR,
      region,
    };
    // A car that fills most of the photo is seen nearly as large by the whole-photo pass: its plate is
    // already proposed there, and reading it again costs a pass (and often the whole decode) for nothing.
    const inputScale = lpdInputSize({ width: region.w, height: region.h }, look).width / region.w;
    if (inputScale < CAR_MIN_ZOOM * wholeInputScale) continue;
    // A quarter-size decode or the whole photo, never the half: `plate` and the background operations read
    // the whole decode wherever a quarter is not enough (`besideWhole`) and `plate_mask` reads the coarsest
    // that is; on one level both find the same plates.
    const scale = Math.min(1, CAR_LOOK_WIDTH / region.w);
    proposals.push(...(await pass(scale <= 0.25 ? scale : 1, look)).slice(0, 2));
    read++;
  }
  const unique: PlateDetection[] = [];
  for (const p of proposals.sort((a, b) => b.score - a.score))
    if (unique.every((u) => boxIoU(u.box, p.box) < 0.5)) unique.push(p);
  return { proposals: unique.slice(0, MAX_PROPOSALS + read), cars };
}

/**
 * Vehicles NanoDet finds, at least `CAR_MIN_SCORE`, in the whole photo and, in a large one, in its tiles
 * (`vehicleTiles`; a vehicle a tile cuts is left to the tile or the whole photo that sees it whole), one box
 * per vehicle, largest first, at most `CAR_LOOKS`.
 */
async function findCars(carDetector: ObjectDetector, levels: SourceLevels, photo: Size): Promise<Box[]> {
  /** Vehicles NanoDet finds in `tile` (the whole photo when undefined), in photo pixels. */
  const vehiclesIn = async (tile?: Box): Promise<Box[]> => {
    const seen = tile ?? { x: 0, y: 0, w: photo.width, h: photo.height };
    const level = await levels.atScale(NANODET_INPUT_SIZE / Math.max(seen.w, seen.h));
    const s = photo.width / level.width;
    const region = tile && {
      x: Math.round(tile.x / s),
      y: Math.round(tile.y / s),
      w: Math.min(level.width - Math.round(tile.x / s), Math.round(tile.w / s)),
      h: Math.min(level.height - Math.round(tile.y / s), Math.round(tile.h / s)),
    };
    const found = await carDetector.detect(level, {
      scoreThreshold: CAR_MIN_SCORE,
      ...(region ? { region } : {}),
    });
    return found
      .filter((o) => VEHICLE_CLASS_IDS.has(o.classId))
      .map((o) => ({ x: o.box.x * s, y: o.box.y * s, w: o.box.w * s, h: o.box.h * s }));
  };
  const boxes = await vehiclesIn();
  for (const tile of vehicleTiles(photo, boxes))
    boxes.push(
      ...(await vehiclesIn(tile)).filter(
        (box) => !cutByTile(box, tile, photo) && box.w <= tile.maxVehicleWidth,
      ),
    );
  return distinctVehicles(boxes, CAR_LOOKS);
}

/** The scale of the photo (share of its width and height) a pass whose input is `input` needs. */
function levelScale(photo: Size, input: Size): number {
  return Math.min(1, Math.max(input.width / photo.width, input.height / photo.height));
}
