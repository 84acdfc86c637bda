/**
 * Fits the `analyze` head (models/heads/analyze-head.json) on the labelled listing photos of
 * ../shared/eval (photos.csv: 200 exteriors in 8 views, 200 interiors).
 *
 *   node --import tsx tools/fit-analyze-head.ts [--eval-dir ../shared/eval] [--out models/heads/analyze-head.json]
 *
 * 1. Observe every photo through the operation's own code (`observe` in layers/vision/operations/analyze.ts):
 *    NanoDet-Plus objects, LPD-YuNet plates, MobileNetV2 features of the car; also for the mirror image,
 *    whose label swaps left and right. That doubles the data and teaches the head which way a car faces.
 * 2. Multinomial logistic regression (softmax) on standardised features, L2 penalty, L-BFGS from zero
 *    weights: deterministic, no random initialisation.
 * 3. Grouped k-fold cross-validation: folds split by car model (the name in the file name), so photos of
 *    one listing or one model never sit on both sides; the seed fixes the fold assignment. Held-out
 *    predictions average the photo's and its mirror's probabilities, as the operation does.
 * 4. The 800 thresholds come from the held-out predictions and the labelled photos (`chooseThresholds`).
 * 5. Fit on all photos and write the weights as integers in units of 1e-4 (half the size of decimals;
 *    the quantized head is checked against the exact fit before it is written), then let Biome format
 *    the file as `npm run lint` expects.
 */
import { spawnSync } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UnclassifiableError } from '#core/errors.ts';
import { HEADS } from '#models/manifest.ts';
import { decodeSource } from '#vision/image-io.ts';
import { type Classification, decide } from '#vision/math/decision.ts';
import { featureStrength, mainVehicle } from '#vision/math/features.ts';
import { type AnalyzeHead, mirrorAveraged, softmax } from '#vision/math/head.ts';
import { HEAD_CLASSES, mirrorView, type View } from '#vision/math/vocabulary.ts';
import { modelCache } from '#vision/models.ts';
import { type AnalyzeModels, analyzeModels, observe } from '#vision/operations/analyze.ts';

/** Bump it in models/manifest.ts (HEADS) when the features, the data or the method change, then refit. */
export const HEAD_VERSION = HEADS['analyze-head'].version;
export const FIT_SETTINGS = { lambda: 0.01, folds: 5, seed: 20250101, maxIterations: 400 } as const;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_EVAL_DIR = path.resolve(REPO_ROOT, '..', 'shared', 'eval');

export interface EvalPhoto {
  readonly file: string;
  readonly photoType: 'exterior' | 'interior';
  readonly view: View | null;
  /** The car model in the file name (`audi_a4`): photos of one listing share it. */
  readonly group: string;
}

export async function readEvalPhotos(evalDir: string): Promise<EvalPhoto[]> {
  const lines = (await readFile(path.join(evalDir, 'photos.csv'), 'utf8')).trim().split('\n');
  return lines.slice(1).map((line) => {
    const [file, photoType, view] = line.split(',');
    const group = /\)([^/]+?)__/.exec(file!)?.[1] ?? file!;
    return {
      file: file!,
      photoType: photoType as EvalPhoto['photoType'],
      view: view ? (view as View) : null,
      group,
    };
  });
}

export interface Sample {
  readonly photo: EvalPhoto;
  readonly features: Float32Array;
  readonly mirroredFeatures: Float32Array;
  /** Index in HEAD_CLASSES, for the photo and for its mirror image. */
  readonly label: number;
  readonly mirroredLabel: number;
  readonly vehicleFound: boolean;
  /** `featureStrength` of the photo (its mirror's differs by a rounding error). */
  readonly strength: number;
}

export const labelOf = (photo: EvalPhoto, mirrored: boolean): number => {
  const name = photo.photoType === 'interior' ? 'interior' : mirrored ? mirrorView(photo.view!) : photo.view!;
  return HEAD_CLASSES.indexOf(name);
};

export async function observeEvalPhotos(
  evalDir: string,
  photos: readonly EvalPhoto[],
  models: AnalyzeModels,
  onProgress?: (done: number) => void,
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const photo of photos) {
    const image = await decodeSource(await readFile(path.join(evalDir, photo.file)));
    const seen = await observe(models, image);
    samples.push({
      photo,
      features: seen.features,
      mirroredFeatures: seen.mirroredFeatures,
      label: labelOf(photo, false),
      mirroredLabel: labelOf(photo, true),
      vehicleFound: mainVehicle(seen.evidence.objects) !== undefined,
      strength: Math.min(featureStrength(seen.features), featureStrength(seen.mirroredFeatures)),
    });
    onProgress?.(samples.length);
  }
  return samples;
}

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

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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

/** Photo and mirror, both labelled: what every fit trains on. */
const trainingRows = (samples: readonly Sample[]) => ({
  rows: samples.flatMap((s) => [s.features, s.mirroredFeatures]),
  labels: samples.flatMap((s) => [s.label, s.mirroredLabel]),
});

export const predictSample = (model: SoftmaxModel, s: Sample): Float64Array =>
  mirrorAveraged(HEAD_CLASSES, predictSoftmax(model, s.features), predictSoftmax(model, s.mirroredFeatures));

/** Held-out probabilities of every sample, each predicted by the fit that did not see its group. */
export function crossValidate(
  samples: readonly Sample[],
  settings: { lambda: number; folds: number; seed: number; maxIterations: number } = FIT_SETTINGS,
): Float64Array[] {
  const foldOf = groupFolds(
    samples.map((s) => s.photo.group),
    settings.folds,
    settings.seed,
  );
  const out: Float64Array[] = new Array(samples.length);
  for (let k = 0; k < settings.folds; k++) {
    const train = samples.filter((s) => foldOf.get(s.photo.group) !== k);
    const { rows, labels } = trainingRows(train);
    const model = fitSoftmax(rows, labels, HEAD_CLASSES.length, settings);
    samples.forEach((s, i) => {
      if (foldOf.get(s.photo.group) === k) out[i] = predictSample(model, s);
    });
  }
  return out;
}

export interface Scores {
  readonly photos: number;
  /** Photo type by the head's argmax, nothing refused. */
  readonly typeAccuracy: number;
  /** Best view class for every labelled exterior, whatever its photo type came out as. */
  readonly viewAccuracy: number;
  /** confusion[true view][predicted view] over the labelled exteriors. */
  readonly confusion: number[][];
  /** With the head's 800 rules (`decide`): the share refused, and the accuracies over the rest. */
  readonly refused: number;
  readonly typeAccuracyAnswered: number;
  readonly viewAccuracyAnswered: number;
}

export type Thresholds = Pick<AnalyzeHead, 'minTypeConfidence' | 'minInteriorStrength'>;

const NO_REFUSAL: Thresholds = { minTypeConfidence: 0, minInteriorStrength: 0 };

/** View of an exterior: the best of the view classes, whatever the photo type came out as. */
const bestView = (p: ArrayLike<number>) => {
  let best = 1;
  for (let c = 2; c < HEAD_CLASSES.length; c++) if (p[c]! > p[best]!) best = c;
  return best;
};

export function score(
  samples: readonly Sample[],
  probabilities: readonly ArrayLike<number>[],
  thresholds: Thresholds = NO_REFUSAL,
): Scores {
  const views = HEAD_CLASSES.length - 1;
  const confusion = Array.from({ length: views }, () => new Array<number>(views).fill(0));
  let typeRight = 0;
  let viewRight = 0;
  let exteriors = 0;
  let refused = 0;
  let answeredTypeRight = 0;
  let answeredExteriors = 0;
  let answeredViewRight = 0;
  samples.forEach((s, i) => {
    const p = probabilities[i]!;
    if (p[0]! >= 0.5 === (s.label === 0)) typeRight++;
    if (s.label !== 0) {
      exteriors++;
      const v = bestView(p);
      confusion[s.label - 1]![v - 1]!++;
      if (v === s.label) viewRight++;
    }
    let decision: Classification;
    try {
      decision = decide({ classes: HEAD_CLASSES, ...thresholds }, p, s);
    } catch (error) {
      if (!(error instanceof UnclassifiableError)) throw error;
      refused++;
      return;
    }
    if ((decision.photoType.value === 'interior') === (s.label === 0)) answeredTypeRight++;
    if (s.label !== 0 && decision.view) {
      answeredExteriors++;
      if (decision.view.value === HEAD_CLASSES[s.label]) answeredViewRight++;
    }
  });
  const answered = samples.length - refused;
  return {
    photos: samples.length,
    typeAccuracy: typeRight / samples.length,
    viewAccuracy: viewRight / exteriors,
    confusion,
    refused: refused / samples.length,
    typeAccuracyAnswered: answeredTypeRight / Math.max(1, answered),
    viewAccuracyAnswered: answeredViewRight / Math.max(1, answeredExteriors),
  };
}

const typeConfidence = (p: ArrayLike<number>) => Math.max(p[0]!, 1 - p[0]!);
/** Rounded down to a multiple of `step`, without the float residue (18 / 0.1 is 179.999...). */
const floorTo = (v: number, step: number) => Number((Math.floor(v / step + 1e-9) * step).toFixed(10));

/**
 * The 800 thresholds, from held-out predictions and the labelled photos:
 * - photo type: the 1% quantile of held-out photo-type confidence, rounded down to 0.01 (so about 1
 *   in 100 real photos comes back 800 rather than as a coin toss between interior and exterior);
 * - interiors: 90% of the weakest feature strength of any labelled interior (photo or mirror).
 */
export function chooseThresholds(
  probabilities: readonly ArrayLike<number>[],
  samples: readonly Sample[],
): Thresholds {
  const confidences = probabilities.map(typeConfidence).sort((a, b) => a - b);
  const quantile = confidences[Math.floor(confidences.length * 0.01)]!;
  const interiors = samples.filter((s) => s.label === 0).map((s) => s.strength);
  return {
    minTypeConfidence: Math.max(0.5, floorTo(quantile, 0.01)),
    minInteriorStrength: floorTo(0.9 * Math.min(...interiors), 0.1),
  };
}

const round = (v: number, digits: number) => Number(v.toPrecision(digits));

export interface HeadFile {
  format: 'softmax-head/1';
  version: string;
  classes: string[];
  features: { count: number; description: string };
  training: Record<string, unknown>;
  minTypeConfidence: number;
  minInteriorStrength: number;
  mean: number[];
  scale: number[];
  weights: number[][];
  weightScale: number;
  bias: number[];
}

const WEIGHT_SCALE = 1e-4;

export function headFile(model: SoftmaxModel, thresholds: Thresholds, training: Record<string, unknown>) {
  const file: HeadFile = {
    format: 'softmax-head/1',
    version: HEAD_VERSION,
    classes: [...HEAD_CLASSES],
    features: {
      count: model.mean.length,
      description:
        'geometryFeatures (17: NanoDet-Plus main vehicle box, LPD-YuNet plate on it) then cnnFeatures of the ' +
        'MobileNetV2 int8 feature map "627" of the car crop (1280 channel means, 1280 left-minus-right column means); ' +
        'see layers/vision/math/features.ts',
    },
    training,
    ...thresholds,
    mean: Array.from(model.mean, (v) => round(v, 4)),
    scale: Array.from(model.scale, (v) => round(v, 4)),
    weights: model.weights.map((row) => Array.from(row, (v) => Math.round(v / WEIGHT_SCALE))),
    weightScale: WEIGHT_SCALE,
    bias: Array.from(model.bias, (v) => round(v, 5)),
  };
  return file;
}

export function formatConfusion(confusion: number[][]): string {
  const names = HEAD_CLASSES.slice(1);
  const short = ['front', 'rear', 'side_L', 'side_R', '3q_L', '3q_R', 'r3q_L', 'r3q_R'];
  const lines = [`${'true \\ predicted'.padEnd(26)}${short.map((s) => s.padStart(7)).join('')}`];
  confusion.forEach((row, i) => {
    lines.push(`${names[i]!.padEnd(26)}${row.map((v) => String(v).padStart(7)).join('')}`);
  });
  return lines.join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] ? path.resolve(args[at + 1]!) : fallback;
  };
  const evalDir = option('--eval-dir', DEFAULT_EVAL_DIR);
  const out = option('--out', path.join(REPO_ROOT, 'models', 'heads', 'analyze-head.json'));
  const photos = await readEvalPhotos(evalDir);
  const models = await analyzeModels(modelCache({}));
  const started = performance.now();
  const samples = await observeEvalPhotos(evalDir, photos, models, (done) => {
    if (done % 50 === 0) console.log(`observed ${done}/${photos.length}`);
  });
  console.log(`observed in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const held = crossValidate(samples);
  const thresholds = chooseThresholds(held, samples);
  const cv = score(samples, held, thresholds);
  console.log(
    `${FIT_SETTINGS.folds}-fold CV grouped by car model, ${samples.length} photos: photo_type ${cv.typeAccuracy.toFixed(3)}, ` +
      `view ${cv.viewAccuracy.toFixed(3)} (argmax, nothing refused)`,
  );
  console.log(
    `thresholds ${JSON.stringify(thresholds)}: ${(cv.refused * 100).toFixed(1)}% refused (800); on the rest ` +
      `photo_type ${cv.typeAccuracyAnswered.toFixed(3)}, view ${cv.viewAccuracyAnswered.toFixed(3)}`,
  );
  console.log(formatConfusion(cv.confusion));

  const { rows, labels } = trainingRows(samples);
  const model = fitSoftmax(rows, labels, HEAD_CLASSES.length, FIT_SETTINGS);
  const file = headFile(model, thresholds, {
    data: `../shared/eval/photos.csv: ${photos.length} photos (${photos.filter((p) => p.photoType === 'interior').length} interiors), each also mirrored with left/right swapped`,
    method: 'multinomial logistic regression, L2, L-BFGS from zero weights',
    ...FIT_SETTINGS,
    cv: {
      grouping: 'car model from the file name',
      photo_type_accuracy: round(cv.typeAccuracy, 3),
      view_accuracy: round(cv.viewAccuracy, 3),
      refused: round(cv.refused, 3),
      photo_type_accuracy_answered: round(cv.typeAccuracyAnswered, 3),
      view_accuracy_answered: round(cv.viewAccuracyAnswered, 3),
    },
  });
  // What the file will predict, against the exact fit: quantizing must not change answers.
  const stored: SoftmaxModel = {
    mean: Float64Array.from(file.mean),
    scale: Float64Array.from(file.scale),
    weights: file.weights.map((r) => Float64Array.from(r, (w) => w * file.weightScale)),
    bias: Float64Array.from(file.bias),
  };
  const argmax = (p: Float64Array) => p.indexOf(Math.max(...p));
  const agree = samples.filter(
    (s) => argmax(predictSample(stored, s)) === argmax(predictSample(model, s)),
  ).length;
  const fit = score(
    samples,
    samples.map((s) => predictSample(stored, s)),
  );
  console.log(
    `stored head agrees with the exact fit on ${agree}/${samples.length} photos; its training-set fit (not an ` +
      `accuracy estimate): photo_type ${fit.typeAccuracy.toFixed(3)}, view ${fit.viewAccuracy.toFixed(3)}`,
  );
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
