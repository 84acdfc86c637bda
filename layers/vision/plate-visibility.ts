import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import { PLATE_SCORE_THRESHOLD } from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import { PLATE_RULE, selectPlates } from '#vision/math/plate-evidence.ts';
import { type PlateDetection, type PlateDetector, plateToFill } from '#vision/plate-detector.ts';

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

/** The plates on the car of a photo, and whether one looks left visible when none is filled. */
export async function platesOnCar(
  detector: PlateDetector,
  image: DecodedImage | SourceLevels,
  onCar: (box: Box) => boolean,
): Promise<PlatesOnCar> {
  const candidates = await detector.candidates(image);
  // The same outlines as `plate` fills (the text line, the rest of a half-boxed plate's row).
  const plates = selectPlates(candidates, image)
    .map(plateToFill)
    .filter((p) => onCar(p.box));
  const cue = candidates.some(
    (c) =>
      c.scores[0] >= PLATE_SCORE_THRESHOLD &&
      c.box.h > 0 &&
      c.box.w / c.box.h >= PLATE_RULE.minAspect &&
      onCar(c.box),
  );
  return { plates, plateLeftVisible: plates.length === 0 && cue };
}
