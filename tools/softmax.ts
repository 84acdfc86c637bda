/**
 * Multinomial logistic regression (softmax) with an L2 penalty, minimised by L-BFGS from zero weights:
 * deterministic, so a refit on the same rows gives the same head. Used by tools/fit-analyze-head.ts.
 */
import { softmax } from '#vision/math/head.ts';

export interface SoftmaxModel {
  readonly mean: Float64Array;
  readonly scale: Float64Array;
  /** classes x features, on standardised features. */
  readonly weights: Float64Array[];
  readonly bias: Float64Array;
}

/**
 * Multinomial logistic regression: mean cross-entropy + lambda/2 |W|^2 (bias not penalised) on
 * standardised features, minimised with L-BFGS (memory 10, backtracking Armijo line search). With
 * `weights`, the mean is weighted (a row of weight 0.5 counts half); the standardisation is not. From
 * `start` (another fit's model, carried over to this standardisation) instead of zero weights when given.
 */
export function fitSoftmax(
  rows: readonly ArrayLike<number>[],
  labels: readonly number[],
  classes: number,
  options: { lambda: number; maxIterations: number; weights?: readonly number[]; start?: SoftmaxModel },
): SoftmaxModel {
  const n = rows.length;
  const rowWeights = options.weights ?? new Array<number>(n).fill(1);
  const total = rowWeights.reduce((a, b) => a + b, 0);
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
      loss -= rowWeights[i]! * Math.log(Math.max(p[labels[i]!]!, 1e-300));
      for (let c = 0; c < classes; c++) {
        const r = ((p[c]! - (c === labels[i] ? 1 : 0)) * rowWeights[i]!) / total;
        if (r === 0) continue;
        const wc = c * d;
        for (let j = 0; j < d; j++) grad[wc + j]! += r * X[o + j]!;
        grad[classes * d + c]! += r;
      }
    }
    loss /= total;
    for (let k = 0; k < classes * d; k++) {
      loss += 0.5 * options.lambda * w[k]! * w[k]!;
      grad[k]! += options.lambda * w[k]!;
    }
    return loss;
  };
  const initial = new Float64Array(P);
  if (options.start) {
    // w.(x - m') / s' + b = sum_j (w_j s_j / s'_j) (x_j - m_j) / s_j + b + sum_j w_j (m_j - m'_j) / s'_j
    const { mean: m0, scale: s0, weights: w0, bias: b0 } = options.start;
    for (let c = 0; c < classes; c++) {
      let shift = b0[c]!;
      for (let j = 0; j < d; j++) {
        initial[c * d + j] = (w0[c]![j]! * scale[j]!) / s0[j]!;
        shift += (w0[c]![j]! * (mean[j]! - m0[j]!)) / s0[j]!;
      }
      initial[classes * d + c] = shift;
    }
  }
  const w = lbfgs(objective, initial, options.maxIterations);
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
