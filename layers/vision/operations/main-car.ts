import type { ObjectDetector } from '#vision/car-detector.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import { distinctVehicles, OBJECT_SCORE_THRESHOLD } from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import { keepMainSubject, type MainSubjectResult, mainCarBox } from '#vision/math/main-subject.ts';
import type { Matte } from '#vision/math/matte.ts';

export interface MainCar {
  /** The main car's box in the photo's pixels; null when NanoDet found no vehicle (matte left as is). */
  readonly box: Box | null;
  /** Every distinct vehicle NanoDet found, the main one included. */
  readonly vehicles: readonly Box[];
  readonly cleared: MainSubjectResult | null;
}

/**
 * Reduces the matte in place to the car the photo is about: ISNet cuts out every salient object, and a
 * neighbouring parked car, a sign or a smudge beside the roof would otherwise stand in the studio too.
 * Without a vehicle in the photo the segmenter's matte is kept: the photo may be of something else.
 */
export async function isolateMainCar(
  cars: ObjectDetector,
  image: DecodedImage,
  matte: Matte,
): Promise<MainCar> {
  const vehicles = distinctVehicles(await cars.detect(image, { scoreThreshold: OBJECT_SCORE_THRESHOLD })).map(
    (v) => v.box,
  );
  const box = mainCarBox(vehicles, image);
  return { box, vehicles, cleared: box ? keepMainSubject(matte, box, vehicles) : null };
}
