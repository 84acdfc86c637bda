/**
 * The fitted softmax head of `analyze` (models/heads/analyze-head.json, fitted by
 * tools/fit-analyze-head.ts): its file format, checked at load, and its probabilities.
 */
import { GEOMETRY_FEATURES } from '#vision/math/features.ts';
import { HEAD_CLASSES, type HeadClass, mirrorView } from '#vision/math/vocabulary.ts';

/** The fitted head as stored in models/heads/analyze-head.json. */
export interface AnalyzeHead {
  readonly format: 'softmax-head/1';
  readonly version: string;
  readonly classes: readonly string[];
  /** Features are standardised, (x - mean) / scale, before the linear map. */
  readonly mean: readonly number[];
  readonly scale: readonly number[];
  /** classes x features, as integers: each weight is its integer times `weightScale`. */
  readonly weights: readonly (readonly number[])[];
  readonly weightScale: number;
  readonly bias: readonly number[];
  /** Below this photo-type confidence (0..1) a photo is unclassifiable (800). */
  readonly minTypeConfidence: number;
  /** An interior whose `featureStrength` is below this shows too little to be one (800). */
  readonly minInteriorStrength: number;
}

/** Checks a parsed head file once, at load: a malformed or mismatched file fails before any job runs. */
export function parseHead(json: unknown, featureCount = GEOMETRY_FEATURES.length + 2 * 1280): AnalyzeHead {
  const h = json as Partial<AnalyzeHead>;
  const problems: string[] = [];
  if (h?.format !== 'softmax-head/1') problems.push(`format ${String(h?.format)}`);
  if (typeof h?.version !== 'string') problems.push('no version');
  if (!Array.isArray(h?.classes) || h.classes.join() !== HEAD_CLASSES.join()) problems.push('classes');
  const d = featureCount;
  const vector = (v: unknown, n: number) =>
    Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!vector(h?.mean, d) || !vector(h?.scale, d) || !h?.scale?.every((x) => x > 0))
    problems.push('mean/scale');
  if (
    !Array.isArray(h?.weights) ||
    h.weights.length !== HEAD_CLASSES.length ||
    !h.weights.every((r) => vector(r, d) && r.every(Number.isInteger)) ||
    !(typeof h.weightScale === 'number' && h.weightScale > 0)
  ) {
    problems.push('weights');
  }
  if (!vector(h?.bias, HEAD_CLASSES.length)) problems.push('bias');
  if (typeof h?.minTypeConfidence !== 'number') problems.push('minTypeConfidence');
  if (typeof h?.minInteriorStrength !== 'number') problems.push('minInteriorStrength');
  if (problems.length > 0) throw new Error(`Not an analyze head for ${d} features: ${problems.join(', ')}`);
  return h as AnalyzeHead;
}

/** Softmax over the head's classes. */
export function headProbabilities(head: AnalyzeHead, features: ArrayLike<number>): Float64Array {
  const d = head.mean.length;
  if (features.length !== d) {
    throw new Error(`The analyze head takes ${d} features, got ${features.length}`);
  }
  const z = new Float64Array(head.classes.length);
  const x = new Float64Array(d);
  for (let j = 0; j < d; j++) x[j] = (features[j]! - head.mean[j]!) / head.scale[j]!;
  head.weights.forEach((row, c) => {
    let s = 0;
    for (let j = 0; j < d; j++) s += row[j]! * x[j]!;
    z[c] = head.bias[c]! + s * head.weightScale;
  });
  return softmax(z);
}

export function softmax(z: ArrayLike<number>): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i]!);
  const out = new Float64Array(z.length);
  let sum = 0;
  for (let i = 0; i < z.length; i++) {
    out[i] = Math.exp(z[i]! - max);
    sum += out[i]!;
  }
  for (let i = 0; i < z.length; i++) out[i]! /= sum;
  return out;
}

/**
 * Probabilities that do not depend on which way the photo was taken: the photo's own, averaged with the
 * mirrored photo's with left and right swapped back.
 */
export function mirrorAveraged(
  classes: readonly string[],
  own: ArrayLike<number>,
  mirrored: ArrayLike<number>,
): Float64Array {
  const index = new Map(classes.map((c, i) => [c, i]));
  return Float64Array.from(
    classes,
    (c, i) => (own[i]! + mirrored[index.get(mirrorView(c as HeadClass))!]!) / 2,
  );
}
