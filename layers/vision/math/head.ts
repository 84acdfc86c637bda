/**
 * The fitted head of `analyze` (models/heads/analyze-head.json, fitted by tools/fit-analyze-head.ts): two
 * softmax maps over the same standardised features, one for the photo type (exterior, interior, podium)
 * and one for the view (8 classes); its file format, checked at load, and its probabilities.
 */
import { CNN_FEATURE_COUNT, GEOMETRY_FEATURES } from '#vision/math/features.ts';
import { mirrorView, PHOTO_TYPES, VIEWS } from '#vision/math/vocabulary.ts';

/** One linear map and its softmax. */
interface SoftmaxLayer {
  readonly classes: readonly string[];
  /** classes x features, as integers: each weight is its integer times the head's `weightScale`. */
  readonly weights: readonly (readonly number[])[];
  readonly bias: readonly number[];
}

/** The fitted head as stored in models/heads/analyze-head.json. */
export interface AnalyzeHead {
  readonly format: 'softmax-head/2';
  readonly version: string;
  /** Features are standardised, (x - mean) / scale, before each linear map. */
  readonly mean: readonly number[];
  readonly scale: readonly number[];
  readonly weightScale: number;
  readonly photoType: SoftmaxLayer;
  readonly view: SoftmaxLayer;
  /** Below this photo-type confidence (0..1) a photo is unclassifiable (800). */
  readonly minTypeConfidence: number;
  /** An interior whose `featureStrength` is below this shows too little to be one (800). */
  readonly minInteriorStrength: number;
}

/** The head's probabilities of a photo, in the order of its layers' classes. */
export interface HeadProbabilities {
  readonly photoType: Float64Array;
  readonly view: Float64Array;
}

/** Checks a parsed head file once, at load: a malformed or mismatched file fails before any job runs. */
export function parseHead(
  json: unknown,
  featureCount = GEOMETRY_FEATURES.length + CNN_FEATURE_COUNT,
): AnalyzeHead {
  const h = json as Partial<AnalyzeHead>;
  const problems: string[] = [];
  if (h?.format !== 'softmax-head/2') problems.push(`format ${String(h?.format)}`);
  if (typeof h?.version !== 'string') problems.push('no version');
  const d = featureCount;
  const vector = (v: unknown, n: number) =>
    Array.isArray(v) && v.length === n && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  if (!vector(h?.mean, d) || !vector(h?.scale, d) || !h?.scale?.every((x) => x > 0))
    problems.push('mean/scale');
  if (!(typeof h?.weightScale === 'number' && h.weightScale > 0)) problems.push('weightScale');
  const layer = (name: 'photoType' | 'view', classes: readonly string[]) => {
    const l = h?.[name];
    if (
      !Array.isArray(l?.classes) ||
      l.classes.join() !== classes.join() ||
      !Array.isArray(l.weights) ||
      l.weights.length !== classes.length ||
      !l.weights.every((r) => vector(r, d) && r.every(Number.isInteger)) ||
      !vector(l.bias, classes.length)
    ) {
      problems.push(name);
    }
  };
  layer('photoType', PHOTO_TYPES);
  layer('view', VIEWS);
  if (typeof h?.minTypeConfidence !== 'number') problems.push('minTypeConfidence');
  if (typeof h?.minInteriorStrength !== 'number') problems.push('minInteriorStrength');
  if (problems.length > 0) throw new Error(`Not an analyze head for ${d} features: ${problems.join(', ')}`);
  return h as AnalyzeHead;
}

/** Softmax over each layer's classes. */
export function headProbabilities(head: AnalyzeHead, features: ArrayLike<number>): HeadProbabilities {
  const d = head.mean.length;
  if (features.length !== d) {
    throw new Error(`The analyze head takes ${d} features, got ${features.length}`);
  }
  const x = new Float64Array(d);
  for (let j = 0; j < d; j++) x[j] = (features[j]! - head.mean[j]!) / head.scale[j]!;
  const apply = (layer: SoftmaxLayer) =>
    softmax(
      layer.weights.map((row, c) => {
        let s = 0;
        for (let j = 0; j < d; j++) s += row[j]! * x[j]!;
        return layer.bias[c]! + s * head.weightScale;
      }),
    );
  return { photoType: apply(head.photoType), view: apply(head.view) };
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
 * mirrored photo's with left and right swapped back (the photo type has no side, so it is a plain mean).
 */
export function mirrorAveraged(own: HeadProbabilities, mirrored: HeadProbabilities): HeadProbabilities {
  const index = new Map(VIEWS.map((c, i) => [c, i]));
  return {
    photoType: Float64Array.from(own.photoType, (p, i) => (p + mirrored.photoType[i]!) / 2),
    view: Float64Array.from(VIEWS, (c, i) => (own.view[i]! + mirrored.view[index.get(mirrorView(c))!]!) / 2),
  };
}
