/**
 * Fits the `analyze` head (models/heads/analyze-head.json): a photo-type layer (exterior, interior,
 * podium) and a view layer (8 views) over the features of layers/vision/math/features.ts, on every
 * labelled source of ../shared/eval (tools/analyze-samples.ts: listing photos, street photos, podium
 * composites, with crops, close-ups and mirror images).
 *
 *   npm run fit-analyze-head -- [--eval-dir ../shared/eval] [--out models/heads/analyze-head.json]
 *
 * 1. Observe every sample through the operation's own code (cached in .cache/analyze-samples).
 * 2. Two multinomial logistic regressions (softmax) on the same standardised features, L2 penalty, L-BFGS
 *    from zero weights: deterministic. The photo-type layer learns from every sample; the view layer from
 *    the samples whose view is labelled (listing exteriors, their composites, and the street photos a
 *    person could give a view: test/eval/street-views.csv).
 *    Every sample is also fitted mirrored, its view's left and right swapped.
 * 3. Grouped k-fold cross-validation: a listing photo's car model is its group, and its composites share
 *    it, so a car never sits on both sides; a street photo is its own group; the seed fixes the folds.
 *    Held-out predictions average the photo's and its mirror's probabilities, as the operation does.
 * 4. The 800 thresholds come from the held-out predictions of the real photos (`chooseThresholds`).
 * 5. Fit on everything and write the weights as integers in units of 1e-4 (checked against the exact fit
 *    before writing), then let Biome format the file as `npm run lint` expects.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UnclassifiableError } from '#core/errors.ts';
import { HEADS } from '#models/manifest.ts';
import { type Classification, decide } from '#vision/math/decision.ts';
import { type AnalyzeHead, type HeadProbabilities, mirrorAveraged, softmax } from '#vision/math/head.ts';
import { mirrorView, PHOTO_TYPES, type PhotoType, VIEWS, type View } from '#vision/math/vocabulary.ts';
import { modelCache } from '#vision/models.ts';
import { mulberry32, observeSamples, readPhotos, type Sample } from './analyze-samples.ts';

/** Bump it in models/manifest.ts (HEADS) when the features, the data or the method change, then refit. */
export const HEAD_VERSION = HEADS['analyze-head'].version;
export const FIT_SETTINGS = { lambda: 0.01, folds: 5, seed: 20250101, maxIterations: 300 } as const;
export type FitSettings = { lambda: number; folds: number; seed: number; maxIterations: number };

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_EVAL_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'eval');
export const CACHE_DIR = path.join(REPO_ROOT, '.cache', 'analyze-samples');

/** Every labelled sample of the eval directory, observed (from the cache where it has them). */
export async function loadSamples(evalDir = DEFAULT_EVAL_DIR, log: (line: string) => void = () => {}) {
  const photos = await readPhotos(evalDir);
  return observeSamples(evalDir, photos, modelCache({}), { cacheDir: CACHE_DIR, log });
}

export const typeLabel = (s: Sample): number => PHOTO_TYPES.indexOf(s.photo.photoType);

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

export interface SoftmaxModel {
  readonly mean: Float64Array;
  readonly scale: Float64Array;
  /** classes x features, on standardised features. */
  readonly weights: Float64Array[];
  readonly bias: Float64Array;
}

/**
 * Multinomial logistic regression: mean cross-entropy + lambda/2 |W|^2 (bias not penalised) on
 * standardised features, minimised with L-BFGS (memory 10, backtracking Armijo line search).
 */
export function fitSoftmax(
  rows: readonly ArrayLike<number>[],
  labels: readonly number[],
  classes: number,
  options: { lambda: number; maxIterations: number },
): SoftmaxModel {
  const n = rows.length;
  const d = rows[0]!.length;
  const mean = new Float64Array(d);
  const scale = new Float64Array(d);
  for (const r of rows) for (let j = 0; j < d; j++) mean[j]! += r[j]! / n;
  for (const r of rows) for (let j = 0; j < d; j++) scale[j]! += (r[j]! - mean[j]!) ** 2 / n;
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]!) || 1;
  const X = new Float64Array(n * d);
  rows.forEach((r, i) => {
    for (let j = 0; j < d; j++) X[i * d + j] = (r[j]! - mean[j]!) / scale[j]!;
  });
  const P = classes * d + classes;
  const z = new Float64Array(classes);
  const objective = (w: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const o = i * d;
      for (let c = 0; c < classes; c++) {
        let s = w[classes * d + c]!;
        const wc = c * d;
        for (let j = 0; j < d; j++) s += w[wc + j]! * X[o + j]!;
        z[c] = s;
      }
      const p = softmax(z);
      loss -= Math.log(Math.max(p[labels[i]!]!, 1e-300));
      for (let c = 0; c < classes; c++) {
        const r = (p[c]! - (c === labels[i] ? 1 : 0)) / n;
        if (r === 0) continue;
        const wc = c * d;
        for (let j = 0; j < d; j++) grad[wc + j]! += r * X[o + j]!;
        grad[classes * d + c]! += r;
      }
    }
    loss /= n;
    for (let k = 0; k < classes * d; k++) {
      loss += 0.5 * options.lambda * w[k]! * w[k]!;
      grad[k]! += options.lambda * w[k]!;
    }
    return loss;
  };
  const w = lbfgs(objective, new Float64Array(P), options.maxIterations);
  return {
    mean,
    scale,
    weights: Array.from({ length: classes }, (_, c) => w.slice(c * d, (c + 1) * d)),
    bias: w.slice(classes * d),
  };
}

function lbfgs(
  f: (w: Float64Array, grad: Float64Array) => number,
  start: Float64Array,
  maxIterations: number,
): Float64Array {
  const P = start.length;
  const memory = 10;
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  let w = start;
  let g = new Float64Array(P);
  let fw = f(w, g);
  const dot = (a: Float64Array, b: Float64Array) => {
    let s = 0;
    for (let i = 0; i < P; i++) s += a[i]! * b[i]!;
    return s;
  };
  for (let it = 0; it < maxIterations; it++) {
    // Two-loop recursion: q = H g.
    const q = Float64Array.from(g);
    const alpha: number[] = [];
    for (let k = S.length - 1; k >= 0; k--) {
      alpha[k] = dot(S[k]!, q) / dot(Y[k]!, S[k]!);
      for (let i = 0; i < P; i++) q[i]! -= alpha[k]! * Y[k]![i]!;
    }
    const last = S.length - 1;
    const gamma = last >= 0 ? dot(S[last]!, Y[last]!) / dot(Y[last]!, Y[last]!) : 1 / Math.sqrt(dot(g, g));
    for (let i = 0; i < P; i++) q[i]! *= gamma;
    for (let k = 0; k < S.length; k++) {
      const beta = dot(Y[k]!, q) / dot(Y[k]!, S[k]!);
      for (let i = 0; i < P; i++) q[i]! += S[k]![i]! * (alpha[k]! - beta);
    }
    const slope = dot(g, q);
    let step = 1;
    let next: Float64Array;
    const nextGrad = new Float64Array(P);
    let fNext: number;
    for (;;) {
      next = Float64Array.from(w, (v, i) => v - step * q[i]!);
      fNext = f(next, nextGrad);
      if (fNext <= fw - 1e-4 * step * slope || step < 1e-10) break;
      step /= 2;
    }
    const s = Float64Array.from(next, (v, i) => v - w[i]!);
    const y = Float64Array.from(nextGrad, (v, i) => v - g[i]!);
    if (dot(s, y) > 1e-12) {
      S.push(s);
      Y.push(y);
      if (S.length > memory) {
        S.shift();
        Y.shift();
      }
    }
    const converged = Math.abs(fw - fNext) <= 1e-9 * Math.max(1, Math.abs(fw));
    w = next;
    g = nextGrad;
    fw = fNext;
    if (converged) break;
  }
  return w;
}

export function predictSoftmax(model: SoftmaxModel, x: ArrayLike<number>): Float64Array {
  const d = model.mean.length;
  return softmax(
    model.weights.map((row, c) => {
      let s = model.bias[c]!;
      for (let j = 0; j < d; j++) s += row[j]! * ((x[j]! - model.mean[j]!) / model.scale[j]!);
      return s;
    }),
  );
}

export interface HeadModels {
  readonly photoType: SoftmaxModel;
  readonly view: SoftmaxModel;
}

/** Both layers on the given samples, each sample also mirrored. */
export function fitHeads(samples: readonly Sample[], settings: FitSettings = FIT_SETTINGS): HeadModels {
  const rows = samples.flatMap((s) => [s.features, s.mirroredFeatures]);
  const types = samples.flatMap((s) => [typeLabel(s), typeLabel(s)]);
  const viewed = samples.filter((s) => s.photo.view);
  return {
    photoType: fitSoftmax(rows, types, PHOTO_TYPES.length, settings),
    view: fitSoftmax(
      viewed.flatMap((s) => [s.features, s.mirroredFeatures]),
      viewed.flatMap((s) => [viewLabel(s, false), viewLabel(s, true)]),
      VIEWS.length,
      settings,
    ),
  };
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
 * Held-out probabilities of every sample, each predicted by the fit that did not see its group; a
 * sample `train` rejects is never fitted on (to measure a source the head has not seen).
 */
export function crossValidate(
  samples: readonly Sample[],
  settings: FitSettings = FIT_SETTINGS,
  options: { train?: (s: Sample) => boolean; log?: (line: string) => void; cacheDir?: string } = {},
): Map<string, HeadProbabilities> {
  const { train, log = () => {}, cacheDir = CACHE_DIR } = options;
  // Deterministic, so the held-out predictions of the same samples and settings are kept on disk: the
  // fitting script and `npm run eval` share them instead of fitting every fold twice.
  // Keyed by the labels and the features too: the same photos labelled anew, or observed by other
  // code, are other samples.
  const hash = createHash('sha256').update(
    JSON.stringify({
      settings,
      samples: samples.map((s) => [s.id, s.photo.photoType, s.photo.view]),
    }),
  );
  for (const s of samples) {
    hash.update(new Uint8Array(s.features.buffer, s.features.byteOffset, s.features.byteLength));
    hash.update(
      new Uint8Array(s.mirroredFeatures.buffer, s.mirroredFeatures.byteOffset, s.mirroredFeatures.byteLength),
    );
  }
  const key = hash.digest('hex').slice(0, 24);
  const cached = path.join(cacheDir, `cv-${key}.json`);
  if (!train && existsSync(cached)) {
    const stored = JSON.parse(readFileSync(cached, 'utf8')) as Record<string, { t: number[]; v: number[] }>;
    if (samples.every((s) => stored[s.id])) {
      log(`held-out predictions from ${path.relative(REPO_ROOT, cached)}`);
      return new Map(
        samples.map((s) => [
          s.id,
          { photoType: Float64Array.from(stored[s.id]!.t), view: Float64Array.from(stored[s.id]!.v) },
        ]),
      );
    }
  }
  const foldOf = groupFolds(
    samples.map((s) => s.photo.group),
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
  if (!train) {
    const stored = Object.fromEntries(
      [...out].map(([id, p]) => [id, { t: Array.from(p.photoType), v: Array.from(p.view) }]),
    );
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(cached, JSON.stringify(stored));
  }
  return out;
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
  const real = samples.filter((s) => s.augmentation === 'orig' && s.photo.source !== 'podium');
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

const round = (v: number, digits: number) => Number(v.toPrecision(digits));

export interface HeadFile {
  format: 'softmax-head/2';
  version: string;
  features: { count: number; description: string };
  training: Record<string, unknown>;
  minTypeConfidence: number;
  minInteriorStrength: number;
  mean: number[];
  scale: number[];
  weightScale: number;
  photoType: { classes: string[]; weights: number[][]; bias: number[] };
  view: { classes: string[]; weights: number[][]; bias: number[] };
}

const WEIGHT_SCALE = 1e-4;

/**
 * Both layers over one standardisation: the view layer's weights are rescaled from its own standardisation
 * (fitted on fewer samples) onto the photo-type layer's, which changes no prediction.
 */
export function headFile(
  models: HeadModels,
  thresholds: Thresholds,
  training: Record<string, unknown>,
): HeadFile {
  const { mean, scale } = models.photoType;
  const d = mean.length;
  const layer = (model: SoftmaxModel, classes: readonly string[]) => {
    // w.(x - m') / s' = sum_j (w_j s_j / s'_j) (x_j - m_j) / s_j + sum_j w_j (m_j - m'_j) / s'_j
    const weights = model.weights.map((row) =>
      Array.from({ length: d }, (_, j) => (row[j]! * scale[j]!) / model.scale[j]!),
    );
    const bias = model.bias.map((b, c) => {
      let shift = 0;
      for (let j = 0; j < d; j++)
        shift += (model.weights[c]![j]! * (mean[j]! - model.mean[j]!)) / model.scale[j]!;
      return b + shift;
    });
    return {
      classes: [...classes],
      weights: weights.map((row) => row.map((v) => Math.round(v / WEIGHT_SCALE))),
      bias: Array.from(bias, (v) => round(v, 6)),
    };
  };
  return {
    format: 'softmax-head/2',
    version: HEAD_VERSION,
    features: {
      count: d,
      description:
        'geometryFeatures (17: NanoDet-Plus main vehicle box, LPD-YuNet plate on it) then cnnFeatures of the ' +
        'MobileNetV2 int8 feature map "627" of the car crop (1280 channel means, 1280 left-minus-right column means) ' +
        'and of its two halves (1280 left-half-mean minus right-half-mean); ' +
        'see layers/vision/math/features.ts',
    },
    training,
    ...thresholds,
    mean: Array.from(mean, (v) => round(v, 5)),
    scale: Array.from(scale, (v) => round(v, 5)),
    weightScale: WEIGHT_SCALE,
    photoType: layer(models.photoType, PHOTO_TYPES),
    view: layer(models.view, VIEWS),
  };
}

/** The stored file as models, to check quantizing against the exact fit. */
export function modelsOfFile(file: HeadFile): HeadModels {
  const layer = (l: HeadFile['view']): SoftmaxModel => ({
    mean: Float64Array.from(file.mean),
    scale: Float64Array.from(file.scale),
    weights: l.weights.map((r) => Float64Array.from(r, (w) => w * file.weightScale)),
    bias: Float64Array.from(l.bias),
  });
  return { photoType: layer(file.photoType), view: layer(file.view) };
}

export function formatConfusion(confusion: number[][]): string {
  const short = ['front', 'rear', 'side_L', 'side_R', '3q_L', '3q_R', 'r3q_L', 'r3q_R'];
  const lines = [`${'true \\ predicted'.padEnd(26)}${short.map((s) => s.padStart(7)).join('')}`];
  confusion.forEach((row, i) => {
    lines.push(`${VIEWS[i]!.padEnd(26)}${row.map((v) => String(v).padStart(7)).join('')}`);
  });
  return lines.join('\n');
}

const argmax = (p: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
};

async function main() {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] ? path.resolve(args[at + 1]!) : fallback;
  };
  const evalDir = option('--eval-dir', DEFAULT_EVAL_DIR);
  const out = option('--out', path.join(REPO_ROOT, 'models', 'heads', 'analyze-head.json'));
  const samples = await loadSamples(evalDir, console.log);
  const count = (source: string) => samples.filter((s) => s.photo.source === source).length;
  console.log(
    `${samples.length} samples: listing ${count('listing')}, street ${count('street')}, podium ${count('podium')}`,
  );

  const held = crossValidate(samples, FIT_SETTINGS, { log: console.log });
  const thresholds = chooseThresholds(held, samples);
  console.log(`thresholds ${JSON.stringify(thresholds)}`);
  for (const source of ['listing', 'street', 'podium'] as const) {
    const orig = samples.filter((s) => s.photo.source === source && s.augmentation === 'orig');
    const outcomes = orig.map((s) => outcome(s, held.get(s.id)!, thresholds));
    const right = outcomes.filter((o, i) => !o.refused && o.photoType === orig[i]!.photo.photoType).length;
    const refused = outcomes.filter((o) => o.refused).length;
    const viewed = orig.filter((s) => s.photo.view);
    const views = viewed.filter((s) => argmax(held.get(s.id)!.view) === viewLabel(s, false)).length;
    console.log(
      `CV ${source}: photo_type ${right}/${orig.length}, refused ${refused}` +
        (viewed.length ? `, view (argmax) ${views}/${viewed.length}` : ''),
    );
  }

  const started = performance.now();
  const models = fitHeads(samples);
  console.log(`final fit in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const file = headFile(models, thresholds, {
    data:
      '../shared/eval: photos.csv (listing: 400, 200 interiors), plates/ (street: 223 exteriors, the view of ' +
      '198 labelled by eye in test/eval/street-views.csv), podium composites of every other listing exterior (100), each on one of the 4 rendered backdrops in turn; ' +
      'crops and close-ups of the real photos; every sample also mirrored with left/right swapped',
    samples: samples.length,
    method: 'two multinomial logistic regressions (photo type, view), L2, L-BFGS from zero weights',
    ...FIT_SETTINGS,
  });
  const stored = modelsOfFile(file);
  const agree = samples.filter((s) => {
    const a = predictSample(stored, s);
    const b = predictSample(models, s);
    return argmax(a.photoType) === argmax(b.photoType) && argmax(a.view) === argmax(b.view);
  }).length;
  console.log(`stored head agrees with the exact fit on ${agree}/${samples.length} samples`);
  await writeFile(out, `${JSON.stringify(file)}\n`);
  const biome = path.join(REPO_ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const formatted = spawnSync(process.execPath, [biome, 'format', '--write', out], { encoding: 'utf8' });
  if (formatted.status !== 0) console.warn(`biome format did not run: ${formatted.stderr}`);
  const { size } = await stat(out);
  console.log(`wrote ${out} (${(size / 1024).toFixed(0)} KB, version ${HEAD_VERSION})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
