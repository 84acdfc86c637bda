/**
 * The licence-plate detector: LPD-YuNet's network pass, and the confirmation of the proposals of
 * plate-proposals.ts by close looks (direct and mirrored) and, where it can change the decision, by
 * reading the text on them.
 */
import * as ort from 'onnxruntime-node';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import { clipRegion, toInputTensor } from '#vision/lpd-input.ts';
import {
  type Box,
  boxIoU,
  boxQuad,
  orderCornersClockwise,
  type Point,
  type Quad,
  quadBoundingBox,
  type Size,
  scaleQuad,
  unionBox,
} from '#vision/math/geometry.ts';
import {
  decodeLpdYunet,
  LPD_DEFAULT_SCORE_THRESHOLD,
  lpdInputSize,
  lpdPriors,
} from '#vision/math/lpd-yunet.ts';
import { PLATE_TEXT_DEFAULTS, plateLineGroups, plateText, type TextRegion } from '#vision/math/ocr.ts';
import {
  confirmed,
  LINE_SEARCH_MAX_SIDE,
  LOOK_MIN_CROP,
  LOOK_SCORE_FLOOR,
  LOOK_WIDTH,
  lineSearchArea,
  lookRegion,
  MERGE_IOU,
  mayReach,
  mergeGroups,
  PLATE_RULE,
  type PlateCandidate,
  type PlateRule,
  plateLine,
  plateScore,
  sameDetection,
  selectPlates,
  TEXT_ALONE_LINES,
  TEXT_SEARCH_CARS,
  TEXT_SEARCH_MAX_SIDE,
  type TextEvidence,
  textReadBox,
} from '#vision/math/plate-evidence.ts';
import { SMALL_MODEL_SESSION } from '#vision/models.ts';
import {
  type DetectOptions,
  type PlateDetection,
  type PlatePass,
  proposePlates,
} from '#vision/plate-proposals.ts';
import type { TextReader } from '#vision/text-reader.ts';

export type { PlateDetection };

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
  candidates(image: DecodedImage | SourceLevels, options?: CandidateOptions): Promise<PlateCandidate[]>;
  /** The plates to fill: candidates that pass `rule` (the shipped one by default), best first. */
  find(image: DecodedImage | SourceLevels, rule?: PlateRule): Promise<PlateDetection[]>;
}

interface CandidateOptions {
  /** Looks that cannot lift a candidate to this are not taken (default: the rule's threshold). */
  readonly threshold?: number;
  /** Text is read only where it can change the decision under this rule (the shipped one by default). */
  readonly rule?: PlateRule;
  /**
   * 'needed' (the service): text read on the proposals the detector does not confirm, and searched for
   * only when nothing is confirmed. 'all' (the evaluation): read and searched everywhere, so that any
   * rule can be judged on the same evidence; `selectPlates` decides the same either way.
   */
  readonly readText?: 'needed' | 'all';
}

export interface PlateDetectorOptions extends DetectOptions {
  /** onnxruntime's default is one thread per physical core. */
  readonly intraOpNumThreads?: number;
  /** The second signal; without it only the detector decides. */
  readonly textReader?: TextReader;
  /** Cars to look inside (far plates); without it only the whole photo is searched. */
  readonly carDetector?: ObjectDetector;
}

const OUTPUTS = ['loc', 'conf', 'iou'] as const;
type Corners = [Point, Point, Point, Point];

/** Loads LPD-YuNet (the dynamic-input file) from a verified path; see `locateModel`. */
export async function createPlateDetector(
  modelPath: string,
  options: PlateDetectorOptions = {},
): Promise<PlateDetector> {
  const { intraOpNumThreads, textReader, carDetector, ...defaults } = options;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      ...SMALL_MODEL_SESSION,
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

  const candidates: PlateDetector['candidates'] = async (source, options = {}) => {
    const rule = options.rule ?? PLATE_RULE;
    const threshold = options.threshold ?? rule.threshold;
    const readAll = options.readText === 'all';
    const levels = 'atScale' in source ? source : wholeLevels(source);
    const photo = { width: levels.width, height: levels.height };
    const at: PlatePass = async (scale, options) => detectIn(await levels.atScale(scale), photo, options);
    // Where a plate may be (plate-proposals.ts); the rest confirms or refutes each place.
    const { proposals: picked, cars } = await proposePlates(
      at,
      levels,
      lpdInputSize(photo, defaults),
      carDetector,
    );
    const look = {
      targetWidth: LOOK_WIDTH,
      maxSide: LOOK_WIDTH,
      upscale: true,
      scoreThreshold: LOOK_SCORE_FLOOR,
    };
    const lookAt = (box: Box, mirror: boolean) => {
      const region = lookRegion(box);
      return at(lookScale(region, photo), { ...look, region, mirror });
    };
    // Candidates on one place are merged, each look's best score counting (`mergeCandidates`), so a
    // look is skipped only when no candidate of the photo could pass whatever it gives: the decision is
    // then the same as with every look taken, at any threshold at or above the one given.
    const best = picked[0]?.score ?? 0;
    // One at a time: onnxruntime already uses every core for each run.
    const directs: (PlateDetection | undefined)[] = [];
    for (const proposal of picked) {
      directs.push(
        mayReach([best], threshold)
          ? sameDetection(proposal.box, await lookAt(proposal.box, false))
          : undefined,
      );
    }
    // Where the candidates' boxes now lie decides which merge (`mergeGroups`); the mirrored look cannot lift
    // a group whose best whole-photo and direct scores already fall short, so none of its members takes it.
    const quads = picked.map((p, i) => directs[i]?.quad ?? p.quad);
    const groupOf = new Map<number, number[]>();
    for (const g of mergeGroups(quads.map(quadBoundingBox))) for (const i of g) groupOf.set(i, g);
    const groupBest = (i: number, score: (j: number) => number) => Math.max(0, ...groupOf.get(i)!.map(score));
    const result: PlateCandidate[] = [];
    for (const [i, proposal] of picked.entries()) {
      const direct = directs[i];
      const known = [groupBest(i, (j) => picked[j]!.score), groupBest(i, (j) => directs[j]?.score ?? 0)];
      const mirrored =
        direct && mayReach(known, threshold)
          ? sameDetection(proposal.box, await lookAt(proposal.box, true))
          : undefined;
      const quad = quads[i]!;
      result.push({
        quad,
        box: quadBoundingBox(quad),
        scores: [proposal.score, direct?.score ?? 0, mirrored?.score ?? 0],
      });
    }
    if (!textReader) return result;

    // The second signal, where it can change the decision: on each proposal the detector does not confirm.
    const image = await levels.atScale(1);
    const read = async (box: Box): Promise<TextEvidence> => {
      const reading = await textReader.read(image, box);
      const { characters, score } = plateText(reading, { width: box.w, height: box.h });
      return { box, characters, score, reading };
    };
    const withText: PlateCandidate[] = [];
    for (const c of result) {
      const unconfirmed = !confirmed(c, { ...rule, textConfirms: 2, textAlone: 2 });
      withText.push(readAll || unconfirmed ? { ...c, text: await read(textReadBox(c.box, photo)) } : c);
    }
    // Plate-shaped text lines the detector did not propose, looked for only when nothing is confirmed: in
    // each car, or over the whole photo when no car was found.
    // The whole plate where the detector saw part of it: only for what is filled (every candidate when
    // all is read), since the outline changes no decision.
    const withLines = async (
      found: PlateCandidate[],
      chosen = readAll ? found : selectPlates(found, photo, rule),
    ): Promise<PlateCandidate[]> => {
      // A chosen plate merged from several candidates keeps the lines of each (`mergeCandidates`).
      const filled = (c: PlateCandidate) => chosen.some((p) => p === c || boxIoU(p.box, c.box) >= MERGE_IOU);
      const out: PlateCandidate[] = [];
      for (const c of found) {
        if (!filled(c)) {
          out.push(c);
          continue;
        }
        const area = lineSearchArea(c.box, photo);
        const regions = await textReader.regions(image, {
          area,
          maxSide: LINE_SEARCH_MAX_SIDE,
          upscale: true,
        });
        const line = plateLine(
          c.box,
          regions.map((r) => r.box),
        );
        out.push(line ? { ...c, line } : c);
      }
      return out;
    };
    const confirmedPlates = readAll ? [] : selectPlates(withText, photo, rule);
    if (confirmedPlates.length > 0) return withLines(withText, confirmedPlates);
    // The largest vehicles only: a car park's every car read for text would cost seconds.
    const areas =
      cars.length > 0 ? cars.slice(0, TEXT_SEARCH_CARS) : [{ x: 0, y: 0, w: photo.width, h: photo.height }];
    const lines: TextRegion[] = [];
    for (const area of areas) {
      // From the whole decode, which reading text needs anyway: every operation that hides plates then
      // finds the same lines, whichever decodes of the photo it made for its own passes.
      lines.push(...(await textReader.regions(image, { area, maxSide: TEXT_SEARCH_MAX_SIDE })));
    }
    // Cars overlap: a line found in two of them is one line.
    const distinct = lines.filter((l, i) => lines.slice(0, i).every((m) => boxIoU(l.box, m.box) < 0.7));
    const groups = plateLineGroups(distinct)
      .map((g) => ({ g, box: unionBox(g.map((r) => r.box)) }))
      .filter(
        ({ box }) =>
          box.w / box.h >= PLATE_TEXT_DEFAULTS.minAspect &&
          box.w / box.h <= PLATE_TEXT_DEFAULTS.maxAspect &&
          box.h >= 8,
      )
      .slice(0, TEXT_ALONE_LINES);
    for (const { g, box } of groups) {
      const readings = [];
      for (const r of g) readings.push(await textReader.read(image, r.box));
      const joined = {
        text: readings.map((r) => r.text).join(''),
        confidence: Math.min(...readings.map((r) => r.confidence)),
      };
      const { characters, score } = plateText(joined, { width: box.w, height: box.h });
      const quad = boxQuad(box);
      withText.push({ quad, box, scores: [0, 0, 0], text: { box, characters, score, reading: joined } });
    }
    return withLines(withText);
  };

  return {
    // The text models' version is part of the detector's: a change of either changes what is filled.
    modelVersion: textReader
      ? `${MODELS['lpd-yunet'].version}+${textReader.modelVersion}`
      : MODELS['lpd-yunet'].version,
    detect,
    candidates,
    async find(image, rule = PLATE_RULE) {
      return selectPlates(await candidates(image, { rule }), image, rule).map(plateToFill);
    },
  };
}

/** A photo already decoded whole, as levels: every pass reads it. */
function wholeLevels(image: DecodedImage): SourceLevels {
  const ready = Promise.resolve(image);
  return { width: image.width, height: image.height, format: image.format, atScale: () => ready };
}

/**
 * A close look reads a level on which its crop is at least `LOOK_MIN_CROP` px wide, the whole photo when
 * none is: a 12 MP photo's look at a plate a tenth of its width comes from its half-size decode.
 */
function lookScale(region: Box, photo: Size): number {
  const w = Math.min(photo.width, region.x + region.w) - Math.max(0, region.x);
  return w > 0 ? Math.min(1, LOOK_MIN_CROP / w) : 1;
}

/** A candidate chosen for filling, with every outline the fill covers. */
export function plateToFill(c: PlateCandidate): PlateDetection {
  return {
    quad: c.quad,
    box: c.box,
    score: plateScore(c),
    ...(c.text && c.text.score > 0 ? { text: c.text } : {}),
    ...(c.line ? { line: c.line } : {}),
  };
}

/**
 * What a fill covers for each plate: the detector's quad, the text line's box where text confirmed it, and
 * the rest of the plate's text row where the detector boxed part of it. Every operation that hides plates
 * fills these.
 */
export function plateOutlines(plates: readonly PlateDetection[]): Quad[] {
  return plates.flatMap((p) => [
    p.quad,
    ...(p.text ? [boxQuad(p.text.box)] : []),
    ...(p.line ? [boxQuad(p.line)] : []),
  ]);
}
