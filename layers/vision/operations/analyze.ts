import { ModelUnavailableError, UnclassifiableError } from '#core/errors.ts';
import type { OperationInput, OperationResult } from '#core/ports.ts';
import headFile from '#models/heads/analyze-head.json' with { type: 'json' };
import { type Classification, decide, toAnalysis } from '#vision/math/decision.ts';
import {
  assembleFeatures,
  type Evidence,
  featureRegion,
  featureStrength,
  mainPlate,
  mainVehicle,
  mirrorEvidence,
  OBJECT_SCORE_THRESHOLD,
  PLATE_SCORE_THRESHOLD,
  regionHalves,
} from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import { type AnalyzeHead, headProbabilities, mirrorAveraged, parseHead } from '#vision/math/head.ts';
import { carDetector, type ObjectDetector } from '../car-detector.ts';
import { createFeatureExtractor, type FeatureExtractor } from '../feature-extractor.ts';
import { type DecodedImage, openSource, type SourceLevels } from '../image-io.ts';
import type { ModelCache } from '../models.ts';
import type { PlateDetector } from '../plate-detector.ts';
import { lpdDetector } from './plate.ts';

export interface AnalyzeModels {
  readonly cars: ObjectDetector;
  readonly plates: PlateDetector;
  readonly features: FeatureExtractor;
}

const threads = (models: ModelCache) => ({ intraOpNumThreads: models.threads });

const featureExtractor = (models: ModelCache): Promise<FeatureExtractor> =>
  models.get('feature-extractor', 'mobilenetv2-int8', (file) =>
    createFeatureExtractor(file, threads(models)),
  );

export async function analyzeModels(models: ModelCache): Promise<AnalyzeModels> {
  const [cars, plates, features] = await Promise.all([
    carDetector(models),
    lpdDetector(models),
    featureExtractor(models),
  ]);
  return { cars, plates, features };
}

/**
 * The longest side `analyze` decodes a photo at, at least. NanoDet reads 416 px, the plate detector's
 * whole-photo pass 640 px, and MobileNetV2 224 px of the car box, so a car a quarter of the photo wide
 * still reaches it. A 12 MP JPEG is decoded at 1/4 (1000x750) by libjpeg's shrink-on-load: the full
 * decode (0.2 s, 36 MB) and every model's resize from 12 MP are not paid. Photos up to 1600 px are
 * decoded whole (the listing photos, most street photos).
 */
export const ANALYSIS_SIDE = 800;

/**
 * The pixels `analyze` sees of a source (415 / 400 / 413 as `decodeSource`); the fitting script reads
 * its samples through this too, so the head is fitted on what runs.
 */
export async function decodeForAnalysis(bytes: Buffer): Promise<DecodedImage> {
  return analysisView(await openSource(bytes));
}

/** The copy of an opened photo that `analyze` looks at (`ANALYSIS_SIDE`). */
const analysisView = (levels: SourceLevels): Promise<DecodedImage> =>
  levels.atScale(Math.min(1, ANALYSIS_SIDE / Math.max(levels.width, levels.height)));

let head: AnalyzeHead | undefined;
/** Checked on first use, so a bad head file fails the job with a message naming it. */
export function analyzeHead(): AnalyzeHead {
  try {
    head ??= parseHead(headFile);
  } catch (error) {
    throw new ModelUnavailableError(
      `models/heads/analyze-head.json is not usable: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return head;
}

/**
 * How the boxes the head reads are decoded: the shipped head (analyze-head-2025.4) was fitted on NanoDet
 * boxes decoded around each cell's corner, shifted up and left of the car (docs/quality.md, Car boxes).
 * With true boxes it changes 1 photo type and 4 views of the 623 photos it was fitted on, front and rear
 * among them, so it keeps reading what it was fitted on. The fitting script observes through `observe`
 * too: a refit on `centre` changes this constant and the head file together.
 */
const HEAD_BOX_PRIORS = 'corner';

export interface Observation {
  readonly evidence: Evidence;
  /** The head's input for the photo and for its mirror image. */
  readonly features: Float32Array;
  readonly mirroredFeatures: Float32Array;
}

/**
 * What the head sees of a photo; the fitting script (tools/fit-analyze-head.ts) goes through this
 * same function. MobileNetV2 reads the car crop and each of its halves, and the same three of the mirror
 * image (six runs of 224 px, about 5 ms each): the detections are mirrored, not detected again, and the
 * mirror image's left half is the photo's right half flipped.
 */
export async function observe(models: AnalyzeModels, image: DecodedImage): Promise<Observation> {
  const [objects, plates] = await Promise.all([
    models.cars.detect(image, { scoreThreshold: OBJECT_SCORE_THRESHOLD, priors: HEAD_BOX_PRIORS }),
    models.plates.detect(image, { scoreThreshold: PLATE_SCORE_THRESHOLD }),
  ]);
  const evidence: Evidence = {
    image: { width: image.width, height: image.height },
    objects,
    plates: plates.map(({ box, score }) => ({ box, score })),
  };
  const region = featureRegion(evidence) ?? { x: 0, y: 0, w: image.width, h: image.height };
  const [left, right] = regionHalves(region);
  const map = (box: Box, mirror: boolean) => models.features.extract(image, box, { mirror });
  const [whole, leftHalf, rightHalf, mirroredWhole, mirroredLeft, mirroredRight] = await Promise.all([
    map(region, false),
    map(left, false),
    map(right, false),
    map(region, true),
    map(right, true),
    map(left, true),
  ]);
  return {
    evidence,
    features: assembleFeatures(evidence, { whole, leftHalf, rightHalf }),
    mirroredFeatures: assembleFeatures(mirrorEvidence(evidence), {
      whole: mirroredWhole,
      leftHalf: mirroredLeft,
      rightHalf: mirroredRight,
    }),
  };
}

/** Steps 2-4 of `analyze`: what it sees of a photo, and what it decides (800 as UnclassifiableError). */
async function classify(
  deps: AnalyzeModels,
  fitted: AnalyzeHead,
  image: DecodedImage,
): Promise<{ evidence: Evidence; classification: Classification }> {
  const { evidence, features, mirroredFeatures } = await observe(deps, image);
  const probabilities = mirrorAveraged(
    headProbabilities(fitted, features),
    headProbabilities(fitted, mirroredFeatures),
  );
  const classification = decide(fitted, probabilities, {
    vehicleFound: mainVehicle(evidence.objects) !== undefined,
    plateFound: mainPlate(evidence) !== undefined,
    strength: featureStrength(features),
  });
  return { evidence, classification };
}

/**
 * The photo type `analyze` would answer for a photo, for the background operations' check that a photo
 * shows a car from outside; null where `analyze` would answer 800 (it cannot tell), which the check
 * leaves to the segmenter.
 */
export function photoTypeReader(models: ModelCache) {
  return async (levels: SourceLevels): Promise<Classification['photoType'] | null> => {
    const [image, deps] = await Promise.all([analysisView(levels), analyzeModels(models)]);
    try {
      return (await classify(deps, analyzeHead(), image)).classification.photoType;
    } catch (error) {
      if (error instanceof UnclassifiableError) return null;
      throw error;
    }
  };
}

/**
 * `analyze`: photo type, view, and what was detected; no image is produced.
 * 1. Decode the source once (415 / 400 as for every operation), at 800 px or more (`decodeForAnalysis`).
 * 2. Observe it: COCO objects (NanoDet-Plus), plates (LPD-YuNet), MobileNetV2 features of the car and
 *    of each of its halves.
 * 3. The fitted head's probabilities, averaged with the mirror image's, so left and right are treated alike.
 * 4. Decide; an unsure photo type, an exterior or podium photo without a car or a plate, or an interior
 *    showing next to nothing is UnclassifiableError (800).
 */
export async function analyzeOperation(models: ModelCache, input: OperationInput): Promise<OperationResult> {
  const fitted = analyzeHead();
  const [decoded, deps] = await Promise.all([decodeForAnalysis(input.source), analyzeModels(models)]);
  const { evidence, classification } = await classify(deps, fitted, decoded);
  return {
    files: [],
    analysis: toAnalysis(classification, evidence),
    modelVersion: {
      car_detector: deps.cars.modelVersion,
      feature_extractor: deps.features.modelVersion,
      analyze_head: fitted.version,
      plate_detector: deps.plates.modelVersion,
    },
    inferenceCached: false,
  };
}
