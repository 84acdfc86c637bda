/**
 * How the analyze head is fitted and held out (tools/fit-analyze-head.ts runs it, test/eval/analysis.ts
 * reports it): the samples, their labels and weights, both layers, grouped cross-validation, the
 * turntable cars left out one at a time, and the 800 thresholds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnclassifiableError } from '#core/errors.ts';
import { HEADS } from '#models/manifest.ts';
import { type Classification, decide } from '#vision/math/decision.ts';
import { type AnalyzeHead, type HeadProbabilities, mirrorAveraged } from '#vision/math/head.ts';
import { mirrorView, PHOTO_TYPES, type PhotoType, VIEWS, type View } from '#vision/math/vocabulary.ts';
import { modelCache } from '#vision/models.ts';
import { mulberry32, observeSamples, readPhotos, type Sample } from './analyze-samples.ts';
import { readTurntable } from './analyze-turntable.ts';
import { fitSoftmax, predictSoftmax, type SoftmaxModel } from './softmax.ts';

/** Bump it in models/manifest.ts (HEADS) when the features, the data or the method change, then refit. */
export const HEAD_VERSION = HEADS['analyze-head'].version;
/**
 * `turntableWeight`: the weight of a turntable frame in the view layer (1 = as much as one listing photo,
 * 0 = not fitted on); `borderWeight`: the weight of a turntable frame whose angle is within `borderDegrees`
 * of a sector border, whose view may be the neighbour's (0 = left out). Weights 0.1 to 2 were tried
 * (docs/quality.md, views from the turntable): each lowered the listing view figure, so the shipped head
 * fits on no turntable frame; 1 with the border frames left out is the choice made on the other sources.
 */
export const FIT_SETTINGS = {
  lambda: 0.01,
  folds: 5,
  seed: 20250101,
  maxIterations: 300,
  turntableWeight: 0,
  borderDegrees: 10,
  borderWeight: 0,
} as const;
export type FitSettings = { -readonly [K in keyof typeof FIT_SETTINGS]: number };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_EVAL_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'eval');
const CACHE_DIR = path.join(REPO_ROOT, '.cache', 'analyze-samples');

/** Every labelled sample of the eval directory with the turntable frames, observed (cached). */
export async function loadSamples(evalDir = DEFAULT_EVAL_DIR, log: (line: string) => void = () => {}) {
  const photos = [...(await readPhotos(evalDir)), ...(await readTurntable(evalDir))];
  return observeSamples(evalDir, photos, modelCache({}), { cacheDir: CACHE_DIR, log });
}

/** Degrees from a turntable frame's angle to the nearest border of its 45-degree sector. */
export const borderDistance = (angle: number): number => {
  const within = (((angle + 22.5) % 45) + 45) % 45;
  return Math.min(within, 45 - within);
};

/** A turntable frame near a sector border: its view may be the neighbour's. */
export const nearBorder = (s: Sample, settings: FitSettings = FIT_SETTINGS): boolean =>
  s.photo.source === 'turntable' && borderDistance(s.photo.angle!) < settings.borderDegrees;

/** The weight of a sample in the view layer (0: not fitted on). */
export function viewWeight(s: Sample, settings: FitSettings = FIT_SETTINGS): number {
  if (!s.photo.view) return 0;
  if (s.photo.source !== 'turntable') return 1;
  return nearBorder(s, settings)
    ? settings.turntableWeight * settings.borderWeight
    : settings.turntableWeight;
}

const typeLabel = (s: Sample): number => PHOTO_TYPES.indexOf(s.photo.photoType);

/** Index in VIEWS of the sample's view (of its mirror image when `mirrored`), -1 when unlabelled. */
export const viewLabel = (s: Sample, mirrored: boolean): number =>
  s.photo.view ? VIEWS.indexOf(mirrored ? mirrorView(s.photo.view) : s.photo.view) : -1;

/** Fold of each group: groups shuffled with the seed, then the largest first onto the lightest fold. */
export function groupFolds(groups: readonly string[], folds: number, seed: number): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const g of groups) sizes.set(g, (sizes.get(g) ?? 0) + 1);
  const random = mulberry32(seed);
  const order = [...sizes.keys()]
    .map((g) => ({ g, r: random() }))
    .sort((a, b) => a.r - b.r)
    .map(({ g }) => g)
    .sort((a, b) => sizes.get(b)! - sizes.get(a)!); // stable: ties keep the shuffled order
  const load = new Array<number>(folds).fill(0);
  const foldOf = new Map<string, number>();
  for (const g of order) {
    const k = load.indexOf(Math.min(...load));
    foldOf.set(g, k);
    load[k]! += sizes.get(g)!;
  }
  return foldOf;
}

export interface HeadModels {
  readonly photoType: SoftmaxModel;
  readonly view: SoftmaxModel;
}

/**
 * Both layers on the given samples, each sample also mirrored. The turntable frames teach the view layer
 * only (weighted by `viewWeight`): the photo-type layer and its thresholds stay those of the other sources.
 */
export function fitHeads(samples: readonly Sample[], settings: FitSettings = FIT_SETTINGS): HeadModels {
  const typed = samples.filter((s) => s.photo.source !== 'turntable');
  return {
    photoType: fitSoftmax(
      typed.flatMap((s) => [s.features, s.mirroredFeatures]),
      typed.flatMap((s) => [typeLabel(s), typeLabel(s)]),
      PHOTO_TYPES.length,
      settings,
    ),
    view: fitView(samples, settings),
  };
}

/** The view layer alone, from `start` when given (a fit that saw none of the samples held out). */
export function fitView(
  samples: readonly Sample[],
  settings: FitSettings,
  start?: SoftmaxModel,
): SoftmaxModel {
  const viewed = samples.filter((s) => viewWeight(s, settings) > 0);
  return fitSoftmax(
    viewed.flatMap((s) => [s.features, s.mirroredFeatures]),
    viewed.flatMap((s) => [viewLabel(s, false), viewLabel(s, true)]),
    VIEWS.length,
    {
      ...settings,
      weights: viewed.flatMap((s) => [viewWeight(s, settings), viewWeight(s, settings)]),
      ...(start ? { start } : {}),
    },
  );
}

export const predictSample = (models: HeadModels, s: Sample): HeadProbabilities =>
  mirrorAveraged(
    {
      photoType: predictSoftmax(models.photoType, s.features),
      view: predictSoftmax(models.view, s.features),
    },
    {
      photoType: predictSoftmax(models.photoType, s.mirroredFeatures),
      view: predictSoftmax(models.view, s.mirroredFeatures),
    },
  );

/**
 * Held-out probabilities kept on disk: the fits are deterministic, so the fitting script and `npm run eval`
 * share them instead of fitting every fold twice. Keyed by the settings, the labels and the features too:
 * the same photos labelled anew, or observed by other code, are other samples.
 */
function heldOnDisk(
  kind: string,
  samples: readonly Sample[],
  settings: FitSettings,
  options: { cacheDir: string; log: (line: string) => void },
  compute: () => Map<string, HeadProbabilities>,
): Map<string, HeadProbabilities> {
  const hash = createHash('sha256').update(
    JSON.stringify({ settings, samples: samples.map((s) => [s.id, s.photo.photoType, s.photo.view]) }),
  );
  for (const s of samples) {
    hash.update(new Uint8Array(s.features.buffer, s.features.byteOffset, s.features.byteLength));
    hash.update(
      new Uint8Array(s.mirroredFeatures.buffer, s.mirroredFeatures.byteOffset, s.mirroredFeatures.byteLength),
    );
  }
  const file = path.join(options.cacheDir, `${kind}-${hash.digest('hex').slice(0, 24)}.json`);
  if (existsSync(file)) {
    options.log(`held-out predictions from ${path.relative(REPO_ROOT, file)}`);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { t: number[]; v: number[] }>;
    return new Map(
      Object.entries(stored).map(([id, p]) => [
        id,
        { photoType: Float64Array.from(p.t), view: Float64Array.from(p.v) },
      ]),
    );
  }
  const out = compute();
  const stored = Object.fromEntries(
    [...out].map(([id, p]) => [id, { t: Array.from(p.photoType), v: Array.from(p.view) }]),
  );
  mkdirSync(options.cacheDir, { recursive: true });
  writeFileSync(file, JSON.stringify(stored));
  return out;
}

/**
 * Held-out probabilities of every sample but the turntable frames (`leaveOneCarOut`), each predicted by
 * the fit that did not see its group; a sample `train` rejects is never fitted on (to measure a source
 * the head has not seen). The folds of the other sources do not depend on the turntable frames, which
 * are fitted on in every fold.
 */
export function crossValidate(
  samples: readonly Sample[],
  settings: FitSettings = FIT_SETTINGS,
  options: { train?: (s: Sample) => boolean; log?: (line: string) => void; cacheDir?: string } = {},
): Map<string, HeadProbabilities> {
  const { train, log = () => {}, cacheDir = CACHE_DIR } = options;
  const run = () => {
    const foldOf = groupFolds(
      samples.filter((s) => s.photo.source !== 'turntable').map((s) => s.photo.group),
      settings.folds,
      settings.seed,
    );
    const out = new Map<string, HeadProbabilities>();
    for (let k = 0; k < settings.folds; k++) {
      const started = performance.now();
      const models = fitHeads(
        samples.filter((s) => foldOf.get(s.photo.group) !== k && (!train || train(s))),
        settings,
      );
      for (const s of samples) if (foldOf.get(s.photo.group) === k) out.set(s.id, predictSample(models, s));
      log(`fold ${k + 1}/${settings.folds} fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    return out;
  };
  return train ? run() : heldOnDisk('cv', samples, settings, { cacheDir, log }, run);
}

/**
 * The turntable frames, each predicted by a head fitted on every other sample but its car's frames
 * (leave one car out), and by `withoutTurntable`, a head fitted on no turntable frame at all. The view
 * layer of each car's fit starts from the latter's, so nothing of the held-out car reaches it (the
 * penalised loss is convex: the start changes only how many iterations the fit takes). The photo-type
 * layer never sees a turntable frame, so its predictions are held out too.
 */
export function leaveOneCarOut(
  samples: readonly Sample[],
  settings: FitSettings = FIT_SETTINGS,
  options: { log?: (line: string) => void; cacheDir?: string } = {},
): { held: Map<string, HeadProbabilities>; withoutTurntable: Map<string, HeadProbabilities> } {
  const { log = () => {}, cacheDir = CACHE_DIR } = options;
  const turntable = samples.filter((s) => s.photo.source === 'turntable');
  let start: HeadModels | undefined;
  const baseline = () => {
    start ??= fitHeads(
      samples.filter((s) => s.photo.source !== 'turntable'),
      settings,
    );
    return start;
  };
  const withoutTurntable = heldOnDisk('no-turntable', samples, settings, { cacheDir, log }, () => {
    const models = baseline();
    return new Map(turntable.map((s) => [s.id, predictSample(models, s)]));
  });
  // No turntable frame is fitted on: every car's fit would be the one above.
  if (settings.turntableWeight === 0) return { held: withoutTurntable, withoutTurntable };
  const held = heldOnDisk('loco', samples, settings, { cacheDir, log }, () => {
    const models = baseline();
    const out = new Map<string, HeadProbabilities>();
    for (const car of [...new Set(turntable.map((s) => s.photo.group))]) {
      const started = performance.now();
      const view = fitView(
        samples.filter((s) => s.photo.group !== car),
        settings,
        models.view,
      );
      for (const s of turntable) {
        if (s.photo.group === car) out.set(s.id, predictSample({ photoType: models.photoType, view }, s));
      }
      log(`${car} left out: fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    return out;
  });
  return { held, withoutTurntable };
}

export type Thresholds = Pick<AnalyzeHead, 'minTypeConfidence' | 'minInteriorStrength'>;

/** What the operation would answer: a photo type (and view), or 800. */
export type Outcome = { refused: true } | { refused: false; photoType: PhotoType; view?: View };

export function outcome(s: Sample, p: HeadProbabilities, thresholds: Thresholds): Outcome {
  let decision: Classification;
  try {
    decision = decide(thresholds, p, s);
  } catch (error) {
    if (!(error instanceof UnclassifiableError)) throw error;
    return { refused: true };
  }
  return {
    refused: false,
    photoType: decision.photoType.value,
    ...(decision.view ? { view: decision.view.value } : {}),
  };
}

/** Rounded down to a multiple of `step`, without the float residue (18 / 0.1 is 179.999...). */
const floorTo = (v: number, step: number) => Number((Math.floor(v / step + 1e-9) * step).toFixed(10));

/**
 * The 800 thresholds, from held-out predictions of the real photos as they are (no crops, no
 * composites):
 * - photo type: the 0.5% quantile of their held-out photo-type confidence, rounded down to 0.01 and
 *   never above 0.5 (a type that is not even even odds against the other two is what a person would
 *   hesitate over too); so about 1 real photo in 200 comes back 800 rather than as a coin toss;
 * - interiors: 90% of the weakest feature strength of any labelled interior photo (uncropped).
 */
export function chooseThresholds(
  held: ReadonlyMap<string, HeadProbabilities>,
  samples: readonly Sample[],
): Thresholds {
  const real = samples.filter(
    (s) => s.augmentation === 'orig' && (s.photo.source === 'listing' || s.photo.source === 'street'),
  );
  const confidences = real.map((s) => Math.max(...held.get(s.id)!.photoType)).sort((a, b) => a - b);
  const quantile = confidences[Math.floor(confidences.length * 0.005)]!;
  // Interiors as photographed: a crop of a plain headliner is as flat as a grey picture, and those must
  // stay apart.
  const interiors = real.filter((s) => s.photo.photoType === 'interior').map((s) => s.strength);
  return {
    minTypeConfidence: Math.min(0.5, floorTo(quantile, 0.01)),
    minInteriorStrength: floorTo(0.9 * Math.min(...interiors), 0.1),
  };
}
