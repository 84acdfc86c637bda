import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import {
  type CloserCandidate,
  closerLookCandidates,
  cornersAlong,
  highOnCar,
  lineAcross,
} from '#vision/math/car-plates.ts';
import { PLATE_SCORE_THRESHOLD } from '#vision/math/features.ts';
import { type Box, boxIoU, nonMaxSuppression, quadBoundingBox } from '#vision/math/geometry.ts';
import {
  LOOK_SCORE_FLOOR,
  lookRegion,
  MERGE_IOU,
  PLATE_RULE,
  PROPOSAL_FLOOR,
  selectPlates,
} from '#vision/math/plate-evidence.ts';
import { type PlateDetection, type PlateDetector, plateToFill } from '#vision/plate-detector.ts';
import type { TextReader } from '#vision/text-reader.ts';

export interface PlatesOnCar {
  /** The plates to fill (the shipped rule's), on the car only. */
  readonly plates: PlateDetection[];
  /**
   * Whether a plate may still be readable: nothing passed the rule, yet the whole-photo pass saw a
   * plate-shaped candidate on the car at the score the analyze head takes as its plate cue (the car shows
   * its front or rear). One candidate list serves both: no extra model run.
   */
  readonly plateLeftVisible: boolean;
}

/** The main car (its box in the photo's pixels), the photo decoded whole, and the text detector. */
export interface MainCarView {
  readonly box: Box;
  readonly image: DecodedImage;
  readonly text: TextReader;
}

/**
 * The main car is read this wide (enlarged when smaller) for its own plate: on 380 px listing photos an
 * angled front plate 35-45 px wide is proposed at the finder's 640 only when mirrored, and weakly.
 */
const CAR_CLOSER_WIDTH = 960;
/** Each close look of the closer look is this wide: at the finder's 384, those plates score under 0.35. */
const CLOSER_LOOK_WIDTH = 640;
/** Proposals of each of the two passes (direct, mirrored) over the car that get close looks. */
const CLOSER_PROPOSALS = 2;
/** Text lines are looked for around a fill (`lookRegion`) with its long side read this large (enlarged). */
const TEXT_LINE_SIDE = 960;

/**
 * The plates of a photo on its main car, and whether one looks left visible when none is filled.
 * 1. The finder's candidates (`PlateDetector.candidates`), selected by the shipped rule; those whose box
 *    is not on the car (`onCar`) are dropped, and so, with `car`, is one high on the car, where its glass
 *    is (`highOnCar`), unless a plate-like reading confirmed it or a text line runs across it
 *    (`textAcross`).
 * 2. With `car` and nothing left on it: a closer look at the main car (`closerLook`), judged by the same
 *    rule, each of its plates below the glass and with a text line across it: read that large, a
 *    listing site's watermark over the roof passes the detector's looks too.
 */
export async function platesOnCar(
  detector: PlateDetector,
  image: DecodedImage | SourceLevels,
  onCar: (box: Box) => boolean,
  car?: MainCarView,
): Promise<PlatesOnCar> {
  const candidates = await detector.candidates(image);
  // The same outlines as `plate` fills (the text line, the rest of a half-boxed plate's row).
  const found = selectPlates(candidates, image)
    .map(plateToFill)
    .filter((p) => onCar(p.box));
  const plates: PlateDetection[] = [];
  for (const p of found) {
    const checked = !car || !highOnCar(p.box, car.box) || (p.text?.score ?? 0) > 0;
    if (checked || (await textLine(car, p.box))) plates.push(p);
  }
  if (car && plates.length === 0) {
    for (const p of await closerLook(detector, car)) {
      if (!onCar(p.box) || highOnCar(p.box, car.box)) continue;
      const line = await textLine(car, p.box);
      const quad = line && cornersAlong(line, p.corners);
      if (line) plates.push(plateToFill(quad ? { ...p, quad, box: quadBoundingBox(quad) } : p));
    }
  }
  const cue = candidates.some(
    (c) =>
      c.scores[0] >= PLATE_SCORE_THRESHOLD &&
      c.box.h > 0 &&
      c.box.w / c.box.h >= PLATE_RULE.minAspect &&
      onCar(c.box),
  );
  return { plates, plateLeftVisible: plates.length === 0 && cue };
}

/** The text line across `box` (`lineAcross`) that PP-OCR's detector finds around it, read enlarged. */
async function textLine({ image, text }: MainCarView, box: Box): Promise<Box | undefined> {
  const area = lookRegion(box);
  const regions = await text.regions(image, { area, maxSide: TEXT_LINE_SIDE, upscale: true });
  return lineAcross(
    box,
    regions.map((r) => r.box),
  );
}

/**
 * The main car read larger than the finder reads it: a pass over its box, as it is and mirrored, proposes
 * places; each gets two close looks, as it is and mirrored, larger than the finder's; the shipped rule
 * judges the three scores (`closerLookCandidates`).
 */
async function closerLook(detector: PlateDetector, { box, image }: MainCarView): Promise<CloserCandidate[]> {
  const pass = { targetWidth: CAR_CLOSER_WIDTH, maxSide: CAR_CLOSER_WIDTH, upscale: true };
  const proposals: PlateDetection[] = [];
  for (const mirror of [false, true]) {
    const found = await detector.detect(image, {
      ...pass,
      region: box,
      mirror,
      scoreThreshold: PROPOSAL_FLOOR,
    });
    proposals.push(...found.slice(0, CLOSER_PROPOSALS));
  }
  // No two places on one spot (IoU over 0.5), best first.
  const places = nonMaxSuppression(
    proposals.map((p) => p.box),
    proposals.map((p) => p.score),
    0.5,
  ).map((i) => proposals[i]!);
  const look = {
    targetWidth: CLOSER_LOOK_WIDTH,
    maxSide: CLOSER_LOOK_WIDTH,
    upscale: true,
    scoreThreshold: LOOK_SCORE_FLOOR,
  };
  const looked = [];
  for (const place of places) {
    const region = lookRegion(place.box);
    const [direct, mirrored] = [
      await detector.detect(image, { ...look, region }),
      await detector.detect(image, { ...look, region, mirror: true }),
    ];
    looked.push({ place, direct, mirrored });
  }
  const candidates = closerLookCandidates(looked, box);
  // Selection merges overlapping candidates into new ones: each keeps the outlines of its own place.
  return selectPlates(candidates, image).map((c) => ({
    ...c,
    corners: candidates.find((k) => k === c || boxIoU(k.box, c.box) >= MERGE_IOU)?.corners ?? [c.quad],
  }));
}
