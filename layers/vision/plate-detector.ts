import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import {
  type Box,
  orderCornersClockwise,
  type Point,
  type Quad,
  quadBoundingBox,
  type Size,
  scaleQuad,
} from '#vision/math/geometry.ts';
import {
  decodeLpdYunet,
  LPD_DEFAULT_SCORE_THRESHOLD,
  type LpdInputSizeOptions,
  lpdInputSize,
  lpdPriors,
} from '#vision/math/lpd-yunet.ts';
import {
  LOOK_MIN_CROP,
  LOOK_WIDTH,
  lookRegion,
  MAX_PROPOSALS,
  mayReach,
  PLATE_RULE,
  type PlateCandidate,
  type PlateRule,
  PROPOSAL_FLOOR,
  plateScore,
  sameDetection,
  selectPlates,
} from '#vision/math/plate-evidence.ts';

/** A plate in source-image pixels. */
export interface PlateDetection {
  readonly quad: Quad;
  readonly box: Box;
  readonly score: number;
}

export interface DetectOptions extends LpdInputSizeOptions {
  readonly scoreThreshold?: number;
  /** Look only inside this part of the image (source pixels); quads still come in source pixels. */
  readonly region?: Box;
  /** Look at the mirror image (test-time flip); quads still come in source pixels. */
  readonly mirror?: boolean;
}

export interface PlateDetector {
  /** Recorded with results so that a change of weights shows. */
  readonly modelVersion: string;
  /**
   * One pass of the network: every detection at or above the score threshold, best score first. The
   * analysis head's plate evidence was fitted on this; fills go through `find`.
   */
  detect(image: DecodedImage, options?: DetectOptions): Promise<PlateDetection[]>;
  /**
   * Every proposal of the whole-photo pass with its close looks, unjudged. Looks that cannot lift a
   * candidate to `threshold` (default: the shipped rule's) are not taken and score 0. From `SourceLevels`,
   * each pass reads the coarsest decode that holds what it needs (`levelScale`), so that a 12 MP photo is
   * seldom decoded whole.
   */
  candidates(image: DecodedImage | SourceLevels, options?: { threshold?: number }): Promise<PlateCandidate[]>;
  /** The plates to fill: candidates that pass `rule` (the shipped one by default), best first. */
  find(image: DecodedImage | SourceLevels, rule?: PlateRule): Promise<PlateDetection[]>;
}

export interface PlateDetectorOptions extends DetectOptions {
  /** onnxruntime's default is one thread per physical core. */
  readonly intraOpNumThreads?: number;
}

const OUTPUTS = ['loc', 'conf', 'iou'] as const;
type Corners = [Point, Point, Point, Point];

/** Loads LPD-YuNet (the dynamic-input file) from a verified path; see `locateModel`. */
export async function createPlateDetector(
  modelPath: string,
  options: PlateDetectorOptions = {},
): Promise<PlateDetector> {
  const { intraOpNumThreads, ...defaults } = options;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }),
    });
  } catch (error) {
    throw new ModelUnavailableError(`The plate detector could not be loaded from ${modelPath}`, {
      cause: error,
    });
  }
  if (!session.inputNames.includes('input') || !OUTPUTS.every((name) => session.outputNames.includes(name))) {
    throw new ModelUnavailableError(
      `${modelPath} is not LPD-YuNet: it takes [${session.inputNames}] and gives [${session.outputNames}]`,
    );
  }

  // Priors depend only on the input size, and photos come in a handful of aspect ratios.
  const priorsBySize = new Map<string, Float32Array>();
  const priorsFor = (size: Size): Float32Array => {
    const key = `${size.width}x${size.height}`;
    let priors = priorsBySize.get(key);
    if (!priors) {
      if (priorsBySize.size >= 32) priorsBySize.clear();
      priors = lpdPriors(size);
      priorsBySize.set(key, priors);
    }
    return priors;
  };

  /**
   * One pass on `image`, a decode of a photo of size `photo` (the same, or smaller by shrink-on-load):
   * regions come and quads go in the photo's pixels.
   */
  const detectIn = async (
    image: DecodedImage,
    photo: Size,
    detectOptions: DetectOptions = {},
  ): Promise<PlateDetection[]> => {
    const opts = { ...defaults, ...detectOptions };
    const sx = image.width / photo.width;
    const sy = image.height / photo.height;
    const region = opts.region
      ? clipRegion(
          { x: opts.region.x * sx, y: opts.region.y * sy, w: opts.region.w * sx, h: opts.region.h * sy },
          image,
        )
      : undefined;
    const seen = region ? { width: region.w, height: region.h } : image;
    const input = lpdInputSize(region ? { width: region.w / sx, height: region.h / sy } : photo, opts);
    const tensor = await toInputTensor(image, input, region, opts.mirror === true);
    const out = await session.run({ input: tensor });
    const candidates = decodeLpdYunet(
      {
        loc: out.loc!.data as Float32Array,
        conf: out.conf!.data as Float32Array,
        iou: out.iou!.data as Float32Array,
      },
      priorsFor(input),
      { scoreThreshold: opts.scoreThreshold ?? LPD_DEFAULT_SCORE_THRESHOLD },
    );
    return candidates.map(({ quad, score }) => {
      const unmirrored = opts.mirror
        ? orderCornersClockwise(quad.map((p) => ({ x: input.width - p.x, y: p.y })) as unknown as Corners)
        : quad;
      const scaled = scaleQuad(unmirrored, input, seen);
      const sourceQuad = (
        region
          ? scaled.map((p) => ({ x: (p.x + region.x) / sx, y: (p.y + region.y) / sy }))
          : scaleQuad(scaled, image, photo)
      ) as Quad;
      return { quad: sourceQuad, box: quadBoundingBox(sourceQuad), score };
    });
  };

  const detect: PlateDetector['detect'] = (image, detectOptions = {}) =>
    detectIn(image, image, detectOptions);

  const candidates: PlateDetector['candidates'] = async (
    source,
    { threshold = PLATE_RULE.threshold } = {},
  ) => {
    const levels = 'atScale' in source ? source : wholeLevels(source);
    const photo = { width: levels.width, height: levels.height };
    const at = async (scale: number, options: DetectOptions) =>
      detectIn(await levels.atScale(scale), photo, options);
    const whole = { scoreThreshold: PROPOSAL_FLOOR };
    const proposals = (
      await at(levelScale(photo, lpdInputSize(photo, { ...defaults, ...whole })), whole)
    ).slice(0, MAX_PROPOSALS);
    const look = { targetWidth: LOOK_WIDTH, maxSide: LOOK_WIDTH, upscale: true, scoreThreshold: 0.02 };
    const lookAt = (box: Box, mirror: boolean) => {
      const region = lookRegion(box);
      return at(lookScale(region, photo), { ...look, region, mirror });
    };
    // Candidates on one place are merged, each look's best score counting (`mergeCandidates`), so a
    // look is skipped only when no candidate of the photo could pass whatever it gives: the decision is
    // then the same as with every look taken, at any threshold at or above the one given.
    const best = proposals[0]?.score ?? 0;
    // One at a time: onnxruntime already uses every core for each run.
    const directs: (PlateDetection | undefined)[] = [];
    for (const proposal of proposals) {
      directs.push(
        mayReach([best], threshold)
          ? sameDetection(proposal.box, await lookAt(proposal.box, false))
          : undefined,
      );
    }
    const bestDirect = Math.max(0, ...directs.map((d) => d?.score ?? 0));
    const result: PlateCandidate[] = [];
    for (const [i, proposal] of proposals.entries()) {
      const direct = directs[i];
      const mirrored =
        direct && mayReach([best, bestDirect], threshold)
          ? sameDetection(proposal.box, await lookAt(proposal.box, true))
          : undefined;
      const quad = direct?.quad ?? proposal.quad;
      result.push({
        quad,
        box: quadBoundingBox(quad),
        scores: [proposal.score, direct?.score ?? 0, mirrored?.score ?? 0],
      });
    }
    return result;
  };

  return {
    modelVersion: MODELS['lpd-yunet'].version,
    detect,
    candidates,
    async find(image, rule = PLATE_RULE) {
      return selectPlates(await candidates(image, rule), image, rule).map((c) => ({
        quad: c.quad,
        box: c.box,
        score: plateScore(c),
      }));
    },
  };
}

/** A photo already decoded whole, as levels: every pass reads it. */
function wholeLevels(image: DecodedImage): SourceLevels {
  const ready = Promise.resolve(image);
  return { width: image.width, height: image.height, format: image.format, atScale: () => ready };
}

/** The scale of the photo (share of its width and height) a pass whose input is `input` needs. */
function levelScale(photo: Size, input: Size): number {
  return Math.min(1, Math.max(input.width / photo.width, input.height / photo.height));
}

/**
 * A close look reads a level on which its crop is at least `LOOK_MIN_CROP` px wide, the whole photo when
 * none is: a 12 MP photo's look at a plate a tenth of its width comes from its half-size decode.
 */
function lookScale(region: Box, photo: Size): number {
  const w = Math.min(photo.width, region.x + region.w) - Math.max(0, region.x);
  return w > 0 ? Math.min(1, LOOK_MIN_CROP / w) : 1;
}

/** Whole pixels inside the image, at least one a side. */
function clipRegion(region: Box, image: Size): Box {
  const x = Math.min(Math.max(0, Math.floor(region.x)), image.width - 1);
  const y = Math.min(Math.max(0, Math.floor(region.y)), image.height - 1);
  const w = Math.max(1, Math.min(image.width, Math.ceil(region.x + region.w)) - x);
  const h = Math.max(1, Math.min(image.height, Math.ceil(region.y + region.h)) - y);
  return { x, y, w, h };
}

/** Resized, BGR, float 0..255, NCHW: what lpd_yunet.py feeds through cv.dnn.blobFromImage. */
async function toInputTensor(
  image: DecodedImage,
  size: Size,
  region: Box | undefined,
  mirror: boolean,
): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  const source = sharp(pixels, { raw: { width, height, channels } });
  if (region) source.extract({ left: region.x, top: region.y, width: region.w, height: region.h });
  if (mirror) source.flop();
  const rgb = await source.removeAlpha().resize(size.width, size.height, { fit: 'fill' }).raw().toBuffer();
  const plane = size.width * size.height;
  const data = new Float32Array(plane * 3);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    data[p] = rgb[i + 2]!;
    data[plane + p] = rgb[i + 1]!;
    data[2 * plane + p] = rgb[i]!;
  }
  return new ort.Tensor('float32', data, [1, 3, size.height, size.width]);
}
