import sharp from 'sharp';
import { PlateNotFoundError, UnclassifiableError } from '#core/errors.ts';
import { FRAMING_DEFAULTS } from '#core/jobs/job.ts';
import type { Operation } from '#core/jobs/operations.ts';
import type { OperationResult, OperationRunner } from '#core/ports.ts';
import { type DecodedImage, openSource, type SourceLevels } from '#vision/image-io.ts';
import type { Box, Quad } from '#vision/math/geometry.ts';
import { assertUsableMatte, labelComponents, type Matte } from '#vision/math/matte.ts';
import { LICENSE_PLATE_ID } from '#vision/math/vocabulary.ts';
import { backgroundOutput, replaceBackground } from '#vision/operations/background.ts';
import { hidePlates } from '#vision/operations/hide-plates.ts';
import { mainCarCutout } from '#vision/operations/main-car.ts';
import { maskFile, plateMaskOutput } from '#vision/operations/masks.ts';
import { plateOutput } from '#vision/operations/plate.ts';
import type { PlateDetection, PlateDetector } from '#vision/plate-detector.ts';
import { colourBytes } from '#vision/plate-fill.ts';
import type { Segmenter } from '#vision/segmenter.ts';

/**
 * The vision port without models, for the tests whose subject is the API (credits, idempotency, batches,
 * uploads): every operation runs its real pipeline (decode, fill, matte, composite, encode through sharp)
 * over two deterministic "models" whose answer a test decides by drawing the photo:
 * - a plate is a patch of marker cyan (`MARKER_PLATE_COLOR`), wider than tall; a photo without one has no
 *   plate (803 for `plate`);
 * - the car is every pixel far from the colour of the photo's border (802 when that is under 1% of it).
 * - an interior is a photo whose border is cabin brown (`MARKER_INTERIOR_COLOR`).
 * `analyze` calls a photo with a marker plate an exterior, an interior one interior, and any other photo
 * unclassifiable (800).
 * Chosen by configuration: the local stack's LOCAL_INFERENCE_HANDLER names test/support/marker-inference.ts.
 */
const MARKER_PLATE_COLOR = '#00ffff';
const MARKER_INTERIOR_COLOR = '#6b4226';
const MODEL_VERSION = 'marker-1';

const isMarker = (r: number, g: number, b: number) => r < 80 && g > 180 && b > 180;

/** The marker patches of an image, largest first: the "plates" of this runner. */
function markerPlates(image: DecodedImage): PlateDetection[] {
  const { width, height, channels, pixels } = image;
  const alpha = new Uint8Array(width * height);
  for (let i = 0; i < alpha.length; i++) {
    const p = i * channels;
    if (isMarker(pixels[p]!, pixels[p + 1]!, pixels[p + 2]!)) alpha[i] = 255;
  }
  const { labels, sizes } = labelComponents({ width, height, alpha }, 128);
  const boxes = sizes.map(() => ({ x0: Infinity, y0: Infinity, x1: -1, y1: -1 }));
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i]!;
    if (label <= 0) continue;
    const b = boxes[label]!;
    const x = i % width;
    const y = (i - x) / width;
    b.x0 = Math.min(b.x0, x);
    b.y0 = Math.min(b.y0, y);
    b.x1 = Math.max(b.x1, x + 1);
    b.y1 = Math.max(b.y1, y + 1);
  }
  return boxes
    .map((b, label) => ({ b, size: sizes[label] ?? 0 }))
    .filter(({ b, size }) => size >= 24 && b.x1 - b.x0 > b.y1 - b.y0)
    .sort((p, q) => q.size - p.size)
    .map(({ b }) => {
      const box: Box = { x: b.x0, y: b.y0, w: b.x1 - b.x0, h: b.y1 - b.y0 };
      const quad: Quad = [
        { x: b.x0, y: b.y0 },
        { x: b.x1, y: b.y0 },
        { x: b.x1, y: b.y1 },
        { x: b.x0, y: b.y1 },
      ];
      return { quad, box, score: 1 };
    });
}

const wholeImage = (image: DecodedImage | SourceLevels) =>
  'pixels' in image ? Promise.resolve(image) : image.atScale(1);

const markerPlateDetector: PlateDetector = {
  modelVersion: MODEL_VERSION,
  detect: async (image) => markerPlates(image),
  find: async (image) => markerPlates(await wholeImage(image)),
  candidates: async (image) =>
    markerPlates(await wholeImage(image)).map(({ quad, box }) => ({ quad, box, scores: [1, 1, 1] as const })),
};

/** The mean colour of the image's outermost pixels. */
function borderMean(image: DecodedImage): number[] {
  const { width, height, channels, pixels } = image;
  const mean = [0, 0, 0];
  let count = 0;
  const addBorder = (x: number, y: number) => {
    const p = (y * width + x) * channels;
    for (let c = 0; c < 3; c++) mean[c]! += pixels[p + c]!;
    count++;
  };
  for (let x = 0; x < width; x++) {
    addBorder(x, 0);
    addBorder(x, height - 1);
  }
  for (let y = 0; y < height; y++) {
    addBorder(0, y);
    addBorder(width - 1, y);
  }
  return mean.map((sum) => sum / count);
}

/** An interior: a border within 24 of cabin brown in every channel. */
function isInterior(image: DecodedImage): boolean {
  const brown = colourBytes(MARKER_INTERIOR_COLOR);
  return borderMean(image).every((value, c) => Math.abs(value - brown[c]!) <= 24);
}

/** The car: pixels whose colour is far (more than 48 in a channel) from the mean of the image's border. */
function borderKeyMatte(image: DecodedImage): Matte {
  const { width, height, channels, pixels } = image;
  const key = borderMean(image);
  const alpha = new Uint8Array(width * height);
  for (let i = 0; i < alpha.length; i++) {
    const p = i * channels;
    const far = key.some((value, c) => Math.abs(pixels[p + c]! - value) > 48);
    if (far) alpha[i] = 255;
  }
  return { width, height, alpha };
}

const borderKeySegmenter: Segmenter = {
  modelVersion: MODEL_VERSION,
  modelMatte: async (image) => borderKeyMatte(image),
  async toPhotoSize(matte, width, height) {
    if (matte.width === width && matte.height === height) return matte;
    const alpha = await sharp(matte.alpha, { raw: { width: matte.width, height: matte.height, channels: 1 } })
      .resize(width, height, { fit: 'fill' })
      .raw()
      .toBuffer();
    return { width, height, alpha: new Uint8Array(alpha) };
  },
  async segment(image) {
    return this.toPhotoSize(borderKeyMatte(image), image.width, image.height);
  },
};

const versions = (...roles: string[]) => Object.fromEntries(roles.map((role) => [role, MODEL_VERSION]));

export function markerOperationRunner(): OperationRunner {
  const detector = markerPlateDetector;
  const segmenter = borderKeySegmenter;
  const background = async (
    input: Parameters<OperationRunner['run']>[1],
    operation: keyof typeof FRAMING_DEFAULTS,
  ): Promise<OperationResult> => {
    const keepPlates = operation === 'background';
    const result = await replaceBackground(
      {
        segmenter,
        detector,
        keepPlates,
        photoType: async (levels) =>
          isInterior(await levels.atScale(1))
            ? { value: 'interior', conf: 0.99 }
            : { value: 'exterior', conf: 0.99 },
      },
      input.source,
      { ...input.params, framing: input.params.framing ?? FRAMING_DEFAULTS[operation] },
      input.background,
    );
    return backgroundOutput(result, versions('segmenter', 'plate_detector'));
  };
  const operations: Record<
    Operation,
    (input: Parameters<OperationRunner['run']>[1]) => Promise<OperationResult>
  > = {
    plate: async (input) =>
      plateOutput(await hidePlates({ detector }, input.source, input.params), versions('plate_detector')),
    background: (input) => background(input, 'background'),
    studio_background: (input) => background(input, 'studio_background'),
    async plate_mask(input) {
      const image = await openSource(input.source);
      const plates = await detector.find(image);
      if (plates.length === 0) throw new PlateNotFoundError('No license plate was detected in the photo');
      return plateMaskOutput(image, plates, input.params, versions('plate_detector'));
    },
    async background_mask(input) {
      const levels = await openSource(input.source);
      const { matte, stats } = await mainCarCutout({ segmenter }, levels);
      assertUsableMatte(stats);
      return {
        files: [await maskFile('background_mask', matte, input.params)],
        modelVersion: versions('segmenter'),
        inferenceCached: false,
      };
    },
    async analyze(input) {
      const image = await (await openSource(input.source)).atScale(1);
      if (isInterior(image)) {
        return {
          files: [],
          analysis: {
            photo_type: { value: 'interior', label: 'Interior', conf: 99 },
            background_detections: {},
          },
          modelVersion: versions('car_detector', 'plate_detector'),
          inferenceCached: false,
        };
      }
      const plates = markerPlates(image);
      if (plates.length === 0)
        throw new UnclassifiableError('The photo could not be classified: no car was found in it');
      return {
        files: [],
        analysis: {
          photo_type: { value: 'exterior', label: 'Exterior', conf: 100 },
          detections: { license_plate: { id: LICENSE_PLATE_ID, conf: 100 } },
          background_detections: {},
        },
        modelVersion: versions('car_detector', 'plate_detector'),
        inferenceCached: false,
      };
    },
  };
  return { run: (operation, input) => operations[operation](input) };
}

/** The inference cache keys results by model identity: this runner's results are never the models'. */
export const markerModelKey = (operation: Operation) => `${MODEL_VERSION}:${operation}`;

/**
 * A photo for the marker runner: a dark car on a light grey ground and, with `plate`, a marker plate on its
 * bumper. `seed` shifts the car, so that photos differ in their bytes (the inference cache keys on them).
 */
export async function markedPhoto(
  options: {
    plate?: boolean;
    width?: number;
    height?: number;
    seed?: number;
    format?: 'jpeg' | 'png';
    /** A cabin instead: brown all round, a dark seat in the middle, no plate. */
    interior?: boolean;
  } = {},
): Promise<Buffer> {
  const { width = 480, height = 320, seed = 0, format = 'jpeg', interior = false } = options;
  const plate = (options.plate ?? true) && !interior;
  const car = {
    left: Math.round(width * 0.2) + (seed % 20),
    top: Math.round(height * 0.3),
    width: Math.round(width * 0.6),
    height: Math.round(height * 0.45),
  };
  const rect = (w: number, h: number, color: string) =>
    sharp({ create: { width: w, height: h, channels: 3, background: color } })
      .png()
      .toBuffer();
  const layers = [{ input: await rect(car.width, car.height, '#203060'), left: car.left, top: car.top }];
  if (plate) {
    const w = Math.round(car.width * 0.25);
    const h = Math.max(6, Math.round(w / 4));
    layers.push({
      input: await rect(w, h, MARKER_PLATE_COLOR),
      left: car.left + Math.round((car.width - w) / 2),
      top: car.top + car.height - h - Math.round(car.height * 0.1),
    });
  }
  const ground = interior ? MARKER_INTERIOR_COLOR : '#c8c8c8';
  const image = sharp({ create: { width, height, channels: 3, background: ground } }).composite(layers);
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 92 }).toBuffer();
}
