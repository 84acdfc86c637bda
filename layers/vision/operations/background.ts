import type { JobParams } from '#core/jobs/job.ts';
import type { OperationResult } from '#core/use-cases/run-inference.ts';
import { type BackdropSource, renderBackdrop } from '#vision/backdrops.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import { compositeOver } from '#vision/composite.ts';
import { besideWhole, encodeResult, openSource } from '#vision/image-io.ts';
import {
  ambientShadow,
  assertUsableMatte,
  contactShadow,
  FOREGROUND,
  horizonRow,
  type Matte,
  matteStats,
} from '#vision/math/matte.ts';
import { type PlateDetection, type PlateDetector, plateOutlines } from '#vision/plate-detector.ts';
import { fillPlates } from '#vision/plate-fill.ts';
import type { Segmenter } from '#vision/segmenter.ts';
import type { ModelCache } from '../models.ts';
import type { OperationInput } from '../operation-input.ts';
import { isnetSegmenter } from '../segmenter.ts';
import { carDetector } from './analyze.ts';
import { mainCarMatte } from './main-car.ts';
import { encodeMask, plateMask } from './masks.ts';
import { plateDetector } from './plate.ts';

export interface ReplaceBackgroundDeps {
  readonly segmenter: Segmenter;
  /** Given for `studio_background`: plates on the car are filled as `plate` fills them. */
  readonly detector?: PlateDetector;
  /** NanoDet: with it only the main car stays in the matte (see `isolateMainCar`). */
  readonly cars?: ObjectDetector;
}

export interface ReplaceBackgroundResult {
  readonly image: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
  readonly width: number;
  readonly height: number;
  /** 8-bit greyscale PNG at the result's size, white = car. */
  readonly matte: Buffer;
  /** The plates filled (those on the car), in the result's pixels; empty without a detector. */
  readonly plates: PlateDetection[];
  /** PNG of the filled plates' mask; null when none was filled or there is no detector. */
  readonly plateMask: Buffer | null;
}

/** Grain added to a drawn preset (8-bit steps), so its gradients do not band once encoded. */
const PRESET_DITHER = 1.5;

/**
 * Replace the background of a car photo.
 * 1. Read the source's header (type from its bytes; 415 / 413 / 400 otherwise), then decode it at full size
 *    for compositing (EXIF orientation applied, sRGB) and, alongside, a reduced copy for the models.
 * 2. Segment the copy and, with a car detector, keep only the main car, then bring the matte to the
 *    photo's size (`mainCarMatte`); a matte covering under 1% or over 98% of the photo is
 *    MaskFailedError (802).
 * 3. With a detector, fill the plates that lie on the car; finding none is not an error here.
 * 4. Draw the backdrop at the photo's size (the supplied file, else the preset laid out around the car)
 *    with a contact shadow along the line the car stands on.
 * 5. Put the car over it in place (its pixels untouched where the matte is solid) and encode as JPEG
 *    (JPEG, WEBP sources) or PNG (PNG sources), metadata stripped; the matte as a greyscale PNG.
 */
export async function replaceBackground(
  deps: ReplaceBackgroundDeps,
  source: Buffer,
  params: Pick<JobParams, 'background' | 'plateColor' | 'plateSmoothing' | 'plateMaskOnly'>,
  backgroundFile: Buffer | null,
): Promise<ReplaceBackgroundResult> {
  // The full-size decode (for compositing) overlaps the models, which look at a reduced copy.
  const levels = await openSource(source);
  const [image, matte] = await Promise.all([levels.atScale(1), mainCarMatte(deps, levels)]);
  const stats = matteStats(matte);
  assertUsableMatte(stats);

  let plates: PlateDetection[] = [];
  if (deps.detector) {
    // The same passes as `plate` (the plates eval measures those): on a large photo the whole-photo pass
    // reads a shrink-on-load decode instead of resizing every pixel.
    plates = (await deps.detector.find(besideWhole(levels, Promise.resolve(image)))).filter((p) =>
      onForeground(matte, p),
    );
    fillPlates(image, plateOutlines(plates), {
      color: params.plateColor,
      smoothing: params.plateSmoothing,
      maskOnly: params.plateMaskOnly,
    });
  }

  const backdropSource: BackdropSource = backgroundFile
    ? { kind: 'file', bytes: backgroundFile }
    : { kind: 'preset', preset: params.background ?? 'studio' };
  const box = stats.box!;
  const backdrop = await renderBackdrop(
    backdropSource,
    {
      width: image.width,
      height: image.height,
      horizonY: horizonRow(stats),
      focusX: box.x + box.w / 2,
      groundY: stats.groundY,
    },
    { ambient: ambientShadow(stats), contact: contactShadow(stats) },
  );
  compositeOver(image, matte, backdrop, { dither: backgroundFile ? 0 : PRESET_DITHER });

  const [encoded, matteBytes, plateBytes] = await Promise.all([
    encodeResult(image),
    encodeMask(matte),
    plates.length > 0
      ? encodeMask(
          plateMask(
            image,
            plates.map((p) => p.quad),
            params,
          ),
        )
      : Promise.resolve(null),
  ]);
  return {
    image: encoded.data,
    contentType: encoded.contentType,
    width: image.width,
    height: image.height,
    matte: matteBytes,
    plates,
    plateMask: plateBytes,
  };
}

/** A plate counts when its centre is on the car: one on a car in the replaced background is gone anyway. */
function onForeground(matte: Matte, plate: PlateDetection): boolean {
  const x = Math.min(matte.width - 1, Math.max(0, Math.floor(plate.box.x + plate.box.w / 2)));
  const y = Math.min(matte.height - 1, Math.max(0, Math.floor(plate.box.y + plate.box.h / 2)));
  return matte.alpha[y * matte.width + x]! >= FOREGROUND;
}

async function run(models: ModelCache, input: OperationInput, hidePlates: boolean): Promise<OperationResult> {
  const segmenter = await isnetSegmenter(models);
  const cars = await carDetector(models);
  const detector = hidePlates ? await plateDetector(models) : undefined;
  const result = await replaceBackground(
    { segmenter, cars, ...(detector ? { detector } : {}) },
    input.source,
    input.params,
    input.background,
  );
  const extension = result.contentType === 'image/png' ? 'png' : 'jpg';
  const files: OperationResult['files'] = [
    { name: `result.${extension}`, roles: ['url'], bytes: result.image, contentType: result.contentType },
    {
      name: 'background_mask.png',
      roles: ['background_mask_url', 'mask_url'],
      bytes: result.matte,
      contentType: 'image/png',
    },
  ];
  if (result.plateMask) {
    files.push({
      name: 'plate_mask.png',
      roles: ['plate_mask_url'],
      bytes: result.plateMask,
      contentType: 'image/png',
    });
  }
  return {
    files,
    modelVersion: {
      segmenter: segmenter.modelVersion,
      car_detector: cars.modelVersion,
      ...(detector ? { plate_detector: detector.modelVersion } : {}),
    },
    inferenceCached: false,
    ...(detector ? { platesDetected: result.plates.length } : {}),
  };
}

/** `background`: the car on the preset, the supplied file or the key's stored background; plates kept. */
export const backgroundOperation = (models: ModelCache, input: OperationInput) => run(models, input, false);

/** `studio_background`: as `background`, with the plates on the car filled with the plate colour. */
export const studioBackgroundOperation = (models: ModelCache, input: OperationInput) =>
  run(models, input, true);
