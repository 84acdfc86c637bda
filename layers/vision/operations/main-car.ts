import type { ObjectDetector } from '#vision/car-detector.ts';
import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import { faintCarMatte } from '#vision/math/faint-car.ts';
import { distinctVehicles, OBJECT_SCORE_THRESHOLD } from '#vision/math/features.ts';
import { type Box, type Size, scaleBox } from '#vision/math/geometry.ts';
import { keepMainSubject, type MainSubjectResult, mainCarChoice } from '#vision/math/main-subject.ts';
import { FOREGROUND, type Matte, type MatteStats, matteStats, usableMatte } from '#vision/math/matte.ts';
import { refineMatte } from '#vision/refine.ts';
import type { Segmenter } from '#vision/segmenter.ts';

/**
 * The shorter side the copy of the photo the models look at has at least: ISNet squeezes the whole photo
 * to 1024 x 1024 and NanoDet letterboxes it into 416 x 416, so more pixels would not reach either.
 */
const PREVIEW_SIDE = 1024;

/** The scale (`SourceLevels.atScale`) of the copy the models look at: `MainCar`'s boxes are in its pixels. */
const previewScale = (source: Size): number =>
  Math.min(1, PREVIEW_SIDE / Math.min(source.width, source.height));

/**
 * A box of `MainCar` in the photo's pixels. The models' copy is the shrink-on-load decode `previewScale`
 * asks for, which may be larger than that scale (a JPEG shrinks by 2, 4 or 8 only): its own width decides.
 */
export async function boxInPhoto(box: Box, source: SourceLevels): Promise<Box> {
  return scaleBox(box, source.width / (await source.atScale(previewScale(source))).width);
}

export interface MainCar {
  /**
   * The main car's box in the pixels of the image NanoDet looked at (`previewScale`); null when NanoDet
   * found no vehicle (matte left as is).
   */
  readonly box: Box | null;
  /** Every distinct vehicle NanoDet found, the main one included, in the image's pixels. */
  readonly vehicles: readonly Box[];
  readonly cleared: MainSubjectResult | null;
  /** Another vehicle was about as large as the kept one (`mainCarChoice`): the more central was kept. */
  readonly ambiguous: boolean;
}

/**
 * Reduces the matte in place to the car the photo is about: ISNet cuts out every salient object, and a
 * neighbouring parked car, a sign or a smudge beside the roof would otherwise stand in the studio too.
 * Without a vehicle in the photo the segmenter's matte is kept: the photo may be of something else.
 * The matte covers the whole image at any size (ISNet's own 1024 x 1024, squeezed): the boxes are scaled
 * to it axis by axis, which keeps every rule of `keepMainSubject` (shares of the box, 8-connectivity).
 */
export async function isolateMainCar(
  cars: ObjectDetector,
  image: DecodedImage,
  matte: Matte,
): Promise<MainCar> {
  const vehicles = distinctVehicles(await cars.detect(image, { scoreThreshold: OBJECT_SCORE_THRESHOLD })).map(
    (v) => v.box,
  );
  const { box, ambiguous } = mainCarChoice(vehicles, image);
  if (!box) return { box, vehicles, cleared: null, ambiguous };
  const sx = matte.width / image.width;
  const sy = matte.height / image.height;
  const scaled = vehicles.map((b) => scaleBox(b, sx, sy));
  const main = scaled[vehicles.indexOf(box)]!;
  return { box, vehicles, cleared: keepMainSubject(matte, main, scaled), ambiguous };
}

/**
 * The matte of the main car at the photo's size, from a reduced copy of it:
 * 1. the coarsest shrink-on-load decode whose shorter side is at least PREVIEW_SIDE (`atScale`; a 12 MP
 *    JPEG is decoded at 1/2 in its IDCT, a PNG whole);
 * 2. ISNet's matte of it at the model's resolution (1024 x 1024 over the whole photo), islands cleared;
 * 3. with `cars`, reduced there to the main car (`isolateMainCar`), NanoDet looking at the same copy; when
 *    that leaves no usable foreground, there or once at the photo's size, and NanoDet saw a vehicle, the
 *    faint car of the segmenter's own matte instead (`faintCarMatte`: at night ISNet is sure of the lamps
 *    only);
 * 4. upscaled once to the photo's size and feathered.
 * So nothing at the photo's size is made for the models: no full-size decode, no cleanup over 12 MP.
 * With it, what was decided on the way (null without `cars`), for the output to say. Given the
 * whole photo, step 4 follows the photo's own edges at its full size (`refineMatte`, a guided filter):
 * mirrors and antennas thinner than a pixel of the 1024 px matte come out whole. A PNG already cut out
 * (`alphaCutout`) keeps its own alpha as the matte: whoever made it decided what the subject is.
 */
export async function mainCarCutout(
  deps: { readonly segmenter: Segmenter; readonly cars?: ObjectDetector },
  source: SourceLevels,
  whole?: Promise<DecodedImage>,
): Promise<{ matte: Matte; stats: MatteStats; car: MainCar | null; ownAlpha: boolean }> {
  const preview = await source.atScale(previewScale(source));
  // A PNG has no shrink-on-load: its preview is the whole photo, alpha included.
  const own = preview.width === source.width ? alphaCutout(preview) : null;
  if (own) return { matte: own, stats: matteStats(own), car: null, ownAlpha: true };
  const small = await deps.segmenter.modelMatte(preview);
  const segmented = deps.cars ? { ...small, alpha: Uint8Array.from(small.alpha) } : null;
  const car = deps.cars ? await isolateMainCar(deps.cars, preview, small) : null;
  const atPhotoSize = async (matte: Matte) => {
    const coarse = await deps.segmenter.toPhotoSize(matte, source.width, source.height);
    return whole ? refineMatte(matte, await whole, coarse) : coarse;
  };
  // "No foreground" with a vehicle in the photo: a car the segmenter saw only faintly (at night).
  const faint = () => {
    if (!car || !segmented) return null;
    const sx = small.width / preview.width;
    const sy = small.height / preview.height;
    const boxes = car.vehicles.map((b) => scaleBox(b, sx, sy));
    const matte = faintCarMatte(segmented, boxes);
    return matte && usableMatte(matteStats(matte)).ok ? matte : null;
  };
  const done = (matte: Matte, stats = matteStats(matte)) => ({ matte, stats, car, ownAlpha: false });
  if (!usableMatte(matteStats(small)).ok) return done(await atPhotoSize(faint() ?? small));
  const matte = await atPhotoSize(small);
  // The operations judge the matte at the photo's size, where the upscale and the refinement move its
  // coverage by a fraction of a percent: a model matte just over the 1% bar can come out just under it.
  const stats = matteStats(matte);
  if (usableMatte(stats).ok) return done(matte, stats);
  const fallback = faint();
  return fallback ? done(await atPhotoSize(fallback)) : done(matte, stats);
}

/**
 * The alpha of a 4-channel image as a matte when it is a cut-out: at least 1% of the pixels transparent
 * (below 128) and at least 1% opaque. A PNG with an alpha channel that is opaque throughout is a photo.
 */
export function alphaCutout(image: DecodedImage): Matte | null {
  if (image.channels !== 4) return null;
  const n = image.width * image.height;
  const alpha = new Uint8Array(n);
  let clear = 0;
  for (let i = 0; i < n; i++) {
    const a = image.pixels[i * 4 + 3]!;
    alpha[i] = a;
    if (a < FOREGROUND) clear++;
  }
  const share = clear / n;
  return share >= 0.01 && share <= 0.99 ? { width: image.width, height: image.height, alpha } : null;
}
