import { MaskFailedError } from '#core/errors.ts';
import { extensionOf, type ImageType } from '#core/images.ts';
import {
  type Aspect,
  CENTER_ASPECT_DEFAULT,
  CENTER_FRAMING,
  type Composition,
  FRAMING_DEFAULTS,
  type Framing,
  type JobParams,
  type PlateFound,
} from '#core/jobs/job.ts';
import type { OperationInput, OperationResult } from '#core/ports.ts';
import { type BackdropSource, renderBackdrop, renderShadow } from '#vision/backdrops.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import { compositeOver } from '#vision/composite.ts';
import { besideWhole, encodeResult, openSource, type SourceLevels } from '#vision/image-io.ts';
import type { Decision } from '#vision/math/decision.ts';
import type { Box, Size } from '#vision/math/geometry.ts';
import {
  ambientShadow,
  assertUsableMatte,
  contactShadow,
  FOREGROUND,
  horizonRow,
  type Matte,
  matteStats,
} from '#vision/math/matte.ts';
import {
  canvasSize,
  centerPlacement,
  type Edge,
  edgesCuttingCar,
  keptPlacement,
  type Placement,
} from '#vision/math/placement.ts';
import { reportedPlates } from '#vision/math/plate-report.ts';
import type { PhotoType } from '#vision/math/vocabulary.ts';
import { type PlateDetection, type PlateDetector, plateOutlines } from '#vision/plate-detector.ts';
import { fillPlates } from '#vision/plate-fill.ts';
import { platesOnCar } from '#vision/plate-visibility.ts';
import { cutOut, moveMatte, reframe } from '#vision/reframe.ts';
import type { Segmenter } from '#vision/segmenter.ts';
import type { TextReader } from '#vision/text-reader.ts';
import { carDetector } from '../car-detector.ts';
import type { ModelCache } from '../models.ts';
import { isnetSegmenter } from '../segmenter.ts';
import { photoTypeReader } from './analyze.ts';
import { boxInPhoto, type MainCar, mainCarCutout } from './main-car.ts';
import { encodeMask, plateMask } from './masks.ts';
import { plateDetector, textReader } from './plate.ts';

export interface ReplaceBackgroundDeps {
  readonly segmenter: Segmenter;
  /** Plates on the car are found with it and, unless `keepPlates`, filled as `plate` fills them. */
  readonly detector?: PlateDetector;
  /** `background`: the plates found are counted, not filled. */
  readonly keepPlates?: boolean;
  /** PP-OCR: with it and `cars`, the main car gets a closer look for its own plate (`platesOnCar`). */
  readonly text?: TextReader;
  /** NanoDet: with it only the main car stays in the matte (see `isolateMainCar`). */
  readonly cars?: ObjectDetector;
  /**
   * The photo type `analyze` would answer (null: it cannot tell); with it, an interior is refused unless
   * `requireExterior` is false.
   */
  readonly photoType?: (source: SourceLevels) => Promise<Decision<PhotoType> | null>;
}

export interface ReplaceBackgroundResult {
  readonly image: Buffer;
  readonly contentType: ImageType;
  readonly width: number;
  readonly height: number;
  /** 8-bit greyscale PNG at the result's size, white = car. */
  readonly matte: Buffer;
  /** The plates filled (those on the car), in the photo's pixels; empty without a detector. */
  readonly plates: PlateDetection[];
  /** The same plates in the result image's pixels (moved with the car), as the job output reports them. */
  readonly platesInResult: PlateFound[];
  /** PNG of the filled plates' mask at the result's size; null when none was filled or there is no detector. */
  readonly plateMask: Buffer | null;
  /** With a detector: whether no plate looks left readable on the car (`plate_hidden`). */
  readonly plateHidden?: boolean;
  /** Where the car was put, and what was decided for the user. */
  readonly composition: Composition;
}

/** What the caller chose; `framing` is resolved (the operation's default applied). */
export type ReplaceBackgroundParams = Pick<
  JobParams,
  | 'background'
  | 'plateColor'
  | 'plateSmoothing'
  | 'plateMaskOnly'
  | 'format'
  | 'maxWidth'
  | 'shadow'
  | 'aspect'
  | 'requireExterior'
> & { readonly framing?: Framing | null };

/** Grain added to a drawn preset (8-bit steps), so its gradients do not band once encoded. */
const PRESET_DITHER = 1.5;

/**
 * Replace the background of a car photo.
 * 1. Read the source's header (type from its bytes; 415 / 413 / 400 otherwise), then decode it at full size
 *    for compositing (EXIF orientation applied, sRGB) and, alongside, a reduced copy for the models.
 * 2. Segment the copy and, with a car detector, keep only the main car, then bring the matte to the
 *    photo's size (`mainCarCutout`; a car the segmenter saw only faintly, as at night, is cut out from its
 *    soft matte when NanoDet saw a vehicle); a matte covering under 1% or over 98% of the photo is
 *    MaskFailedError (802).
 * 3. With a detector, find the plates that lie on the car and fill them (`studio_background`) or only
 *    count them (`background`); finding none is not an error here, but a plate cue on the car with nothing
 *    filled makes `plateHidden` false.
 * 4. `framing: center`: the car is scaled and moved to its place on a canvas of the `aspect` asked, with the
 *    photo's pixel count (`canvasSize`, `centerPlacement`); a car the photo's edge cuts keeps its framing
 *    on that canvas, against the same edges (`keptPlacement`), which the composition then says.
 * 5. Draw the backdrop at the frame's size (the supplied file, else the preset laid out around the car)
 *    with a contact shadow along the line the car stands on; `transparent`: the car alone on alpha, its
 *    shadow only when asked.
 * 6. Put the car over it in place (its pixels untouched where the matte is solid) and encode as asked
 *    (`format`, `max_width`), else JPEG (JPEG, WEBP sources) or PNG (PNG sources, transparent results),
 *    metadata stripped; the matte as a greyscale PNG of the same size.
 */
export async function replaceBackground(
  deps: ReplaceBackgroundDeps,
  source: Buffer,
  params: ReplaceBackgroundParams,
  backgroundFile: Buffer | null,
): Promise<ReplaceBackgroundResult> {
  // The full-size decode (for compositing) overlaps the models, which look at a reduced copy.
  const levels = await openSource(source);
  const whole = levels.atScale(1);
  const readType = params.requireExterior !== false ? deps.photoType : undefined;
  let [image, { matte, stats, car, ownAlpha }, photoType] = await Promise.all([
    whole,
    mainCarCutout(deps, levels, whole),
    readType ? readType(levels) : null,
  ]);
  if (photoType?.value === 'interior' && !ownAlpha) throw notAnExterior(photoType.conf);
  assertUsableMatte(stats);

  let plates: PlateDetection[] = [];
  let plateHidden: boolean | undefined;
  if (deps.detector) {
    // The same passes as `plate` (the plates eval measures those): on a large photo the whole-photo pass
    // reads a shrink-on-load decode instead of resizing every pixel.
    // The main car's box places its own plate and bounds the closer look for it.
    const found = await platesOnCar(
      deps.detector,
      besideWhole(levels, Promise.resolve(image)),
      (box) => onForeground(matte, box),
      car?.box && deps.text ? { box: await boxInPhoto(car.box, levels), image, text: deps.text } : undefined,
    );
    plates = found.plates;
    plateHidden = deps.keepPlates ? plates.length === 0 && !found.plateLeftVisible : !found.plateLeftVisible;
  }
  let plateMatte: Matte | null = null;
  if (deps.detector && !deps.keepPlates && plates.length > 0) {
    // The plate whole (its rim, frame and any band the detector's quad misses): a dealer publishes this.
    const shapes = fillPlates(image, plateOutlines(plates), {
      color: params.plateColor,
      smoothing: params.plateSmoothing,
      maskOnly: params.plateMaskOnly,
      whole: true,
    });
    plateMatte = plateMask(image, shapes);
  }

  const cut = edgesCuttingCar(matte, stats);
  const centring = params.framing === 'center';
  const aspect = centring ? (params.aspect ?? CENTER_ASPECT_DEFAULT) : 'keep';
  const canvas = canvasSize(image, aspectRatio(aspect));
  const reshaped = canvas.width !== image.width || canvas.height !== image.height;
  // A car cut by the photo's edge keeps its framing, on the canvas asked (`keptPlacement`).
  let placement: Placement | null = null;
  if (centring && cut.length === 0) placement = centerPlacement(stats, CENTER_FRAMING, canvas);
  else if (centring && reshaped) placement = keptPlacement(stats, cut, canvas);
  if (placement) {
    const region = stats.box!;
    [{ image, matte }, plateMatte] = await Promise.all([
      reframe(image, matte, region, placement, canvas),
      plateMatte ? moveMatte(plateMatte, region, placement, canvas) : Promise.resolve(null),
    ]);
    stats = matteStats(matte);
  }
  const composition = compositionOf(
    params.framing ?? 'keep',
    { centred: placement !== null && cut.length === 0, aspect: placement ? aspect : 'keep' },
    cut,
    car,
  );
  if (ownAlpha) composition.notes.push('The photo’s own transparency was kept as the cut-out.');

  const transparent = params.background === 'transparent' && !backgroundFile;
  const shadow = { ambient: ambientShadow(stats), contact: contactShadow(stats) };
  if (transparent) {
    const floor = (params.shadow ?? false) ? await renderShadow(image, shadow) : null;
    image = cutOut(image, matte, floor);
  } else {
    const backdropSource: BackdropSource = backgroundFile
      ? { kind: 'file', bytes: backgroundFile }
      : {
          kind: 'preset',
          preset: params.background === 'transparent' ? 'studio' : (params.background ?? 'studio'),
        };
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
      (params.shadow ?? true) ? shadow : { ambient: null, contact: null },
    );
    compositeOver(image, matte, backdrop, { dither: backgroundFile ? 0 : PRESET_DITHER });
  }

  const maxWidth = params.maxWidth ?? null;
  const drawn: Size = { width: image.width, height: image.height };
  const [encoded, matteBytes, plateBytes] = await Promise.all([
    encodeResult(image, { format: params.format ?? (transparent ? 'png' : null), maxWidth }),
    encodeMask(matte, maxWidth),
    plateMatte ? encodeMask(plateMatte, maxWidth) : Promise.resolve(null),
  ]);
  return {
    image: encoded.data,
    contentType: encoded.contentType,
    width: encoded.width,
    height: encoded.height,
    matte: matteBytes,
    plates,
    platesInResult: reportedPlates(plates, { placement, drawn, encoded }),
    plateMask: plateBytes,
    composition,
    ...(plateHidden !== undefined ? { plateHidden } : {}),
  };
}

/** 802 for an interior: a studio floor under a cabin's blurred mirror is no result, and costs nothing. */
function notAnExterior(conf: number): MaskFailedError {
  return new MaskFailedError(
    `The photo looks like an interior (${Math.round(conf * 100)}% sure), not a car seen from outside: no ` +
      'background was replaced and no credits were charged. Send require_exterior: false to cut it out anyway.',
  );
}

/** `4:3` as [4, 3]; `keep` (the photo's own shape) as null. */
function aspectRatio(aspect: Aspect): [number, number] | null {
  if (aspect === 'keep') return null;
  const [w, h] = aspect.split(':').map(Number);
  return [w!, h!];
}

/** The decisions a user would otherwise discover by looking, in fields and in words. */
function compositionOf(
  asked: Framing,
  applied: { centred: boolean; aspect: Aspect },
  cut: readonly Edge[],
  car: MainCar | null,
): Composition {
  const placed = applied.centred;
  const notes: string[] = [];
  if (asked === 'center' && !placed && cut.length > 0) {
    notes.push(
      `The photo's ${cut.join(' and ')} edge${cut.length > 1 ? 's cut' : ' cuts'} the car: it keeps its ` +
        'framing, since centring it would show the cut.' +
        (applied.aspect !== 'keep'
          ? ` It stands against the same edge of the ${applied.aspect} canvas.`
          : ''),
    );
  }
  const vehicles = car?.vehicles.length ?? 0;
  const ambiguous = car?.ambiguous ?? false;
  if (ambiguous) notes.push('Two vehicles of about equal size: the more central one was kept.');
  else if (vehicles > 1)
    notes.push(`${vehicles - 1} other vehicle${vehicles > 2 ? 's were' : ' was'} removed.`);
  return {
    framing: placed ? 'center' : 'keep',
    aspect: applied.aspect,
    car_cut_by_edge: [...cut],
    vehicles,
    main_car_ambiguous: ambiguous,
    notes,
  };
}

/** A plate counts when its centre is on the car: one on a car in the replaced background is gone anyway. */
function onForeground(matte: Matte, box: Box): boolean {
  const x = Math.min(matte.width - 1, Math.max(0, Math.floor(box.x + box.w / 2)));
  const y = Math.min(matte.height - 1, Math.max(0, Math.floor(box.y + box.h / 2)));
  return matte.alpha[y * matte.width + x]! >= FOREGROUND;
}

async function run(
  models: ModelCache,
  input: OperationInput,
  operation: keyof typeof FRAMING_DEFAULTS,
): Promise<OperationResult> {
  const hidePlates = operation === 'studio_background';
  const segmenter = await isnetSegmenter(models);
  const cars = await carDetector(models);
  // `background` keeps the plates but still looks for them: its result says whether one is readable.
  const detector = await plateDetector(models);
  const text = await textReader(models);
  const result = await replaceBackground(
    { segmenter, cars, detector, text, keepPlates: !hidePlates, photoType: photoTypeReader(models) },
    input.source,
    { ...input.params, framing: input.params.framing ?? FRAMING_DEFAULTS[operation] },
    input.background,
  );
  return backgroundOutput(result, {
    segmenter: segmenter.modelVersion,
    car_detector: cars.modelVersion,
    plate_detector: detector.modelVersion,
  });
}

/**
 * What a background operation gives for its job: the result, the matte as `background_mask.png`, the
 * filled plates' mask when there is one, and what was decided.
 */
export function backgroundOutput(
  result: ReplaceBackgroundResult,
  modelVersion: Record<string, string>,
): OperationResult {
  const files: OperationResult['files'] = [
    {
      name: `result.${extensionOf(result.contentType)}`,
      roles: ['url'],
      bytes: result.image,
      contentType: result.contentType,
    },
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
    modelVersion,
    inferenceCached: false,
    plates: result.platesInResult,
    ...(result.plateHidden !== undefined ? { plateHidden: result.plateHidden } : {}),
    composition: result.composition,
  };
}

/** `background`: the car on the preset, the supplied file or the key's stored background; plates kept. */
export const backgroundOperation = (models: ModelCache, input: OperationInput) =>
  run(models, input, 'background');

/** `studio_background`: as `background`, with the plates on the car filled with the plate colour. */
export const studioBackgroundOperation = (models: ModelCache, input: OperationInput) =>
  run(models, input, 'studio_background');
