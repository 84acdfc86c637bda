/**
 * The guided filter (He, Sun, Tang, "Guided Image Filtering", 2010/2013) over Float32Arrays, and its fast
 * form (He and Sun, "Fast Guided Filter", 2015): the coefficients are fitted on a reduced copy and applied
 * at full size, so a matte made at 1024 px follows the photo's own edges at 12 MP. Locally the output is a
 * linear function of the guide, q = a * I + b, fitted to the input p in every window by least squares with
 * a ridge `eps`: where the guide has an edge (variance >> eps) the output takes it; where it is flat, the
 * output is p's local mean. Pure functions, O(n) in the pixels whatever the radius.
 */

/** The box mean over a (2r+1)^2 window, clipped at the borders (each mean over the pixels inside). */
export function boxMean(src: Float32Array, width: number, height: number, r: number): Float32Array {
  if (src.length !== width * height) throw new RangeError(`${src.length} values for ${width}x${height}`);
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  // Horizontal running sums, then vertical; counts follow the clipped window so borders are not darkened.
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let sum = 0;
    for (let x = 0; x <= Math.min(r, width - 1); x++) sum += src[row + x]!;
    for (let x = 0; x < width; x++) {
      const x0 = Math.max(0, x - r);
      const x1 = Math.min(width - 1, x + r);
      tmp[row + x] = sum / (x1 - x0 + 1);
      if (x + r + 1 < width) sum += src[row + x + r + 1]!;
      if (x - r >= 0) sum -= src[row + x - r]!;
    }
  }
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let y = 0; y <= Math.min(r, height - 1); y++) sum += tmp[y * width + x]!;
    for (let y = 0; y < height; y++) {
      const y0 = Math.max(0, y - r);
      const y1 = Math.min(height - 1, y + r);
      out[y * width + x] = sum / (y1 - y0 + 1);
      if (y + r + 1 < height) sum += tmp[(y + r + 1) * width + x]!;
      if (y - r >= 0) sum -= tmp[(y - r) * width + x]!;
    }
  }
  return out;
}

/** The mean coefficients of the guided filter: the output at a pixel is `a * guide + b`. */
export interface GuidedCoefficients {
  readonly width: number;
  readonly height: number;
  readonly a: Float32Array;
  readonly b: Float32Array;
}

/**
 * The guided filter's coefficients (already box-averaged) for a grey guide `I` and an input `p`, both in
 * 0..1 at `width` x `height`, window radius `r`, regularisation `eps` (in squared guide units: 1e-4 keeps
 * edges of 1% contrast, 1e-2 only strong ones).
 */
export function guidedCoefficients(
  guide: Float32Array,
  p: Float32Array,
  width: number,
  height: number,
  r: number,
  eps: number,
): GuidedCoefficients {
  const n = width * height;
  if (guide.length !== n || p.length !== n) throw new RangeError('guide and input differ in size');
  const ip = new Float32Array(n);
  const ii = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    ip[i] = guide[i]! * p[i]!;
    ii[i] = guide[i]! * guide[i]!;
  }
  const meanI = boxMean(guide, width, height, r);
  const meanP = boxMean(p, width, height, r);
  const meanIp = boxMean(ip, width, height, r);
  const meanII = boxMean(ii, width, height, r);
  // Reuse the products' buffers for a and b: nothing reads them again.
  const a = ip;
  const b = ii;
  for (let i = 0; i < n; i++) {
    const mi = meanI[i]!;
    const cov = meanIp[i]! - mi * meanP[i]!;
    const variance = meanII[i]! - mi * mi;
    const ai = cov / (variance + eps);
    a[i] = ai;
    b[i] = meanP[i]! - ai * mi;
  }
  return { width, height, a: boxMean(a, width, height, r), b: boxMean(b, width, height, r) };
}

/**
 * The guided filter at one size, q = mean(a) * I + mean(b): the coefficients of `guidedCoefficients`,
 * which takes the same arguments, applied to the guide they were fitted on.
 */
export function guidedFilter(...args: Parameters<typeof guidedCoefficients>): Float32Array {
  const [guide] = args;
  const { a, b } = guidedCoefficients(...args);
  const q = new Float32Array(guide.length);
  for (let i = 0; i < q.length; i++) q[i] = a[i]! * guide[i]! + b[i]!;
  return q;
}

/**
 * The coefficient grid sampled bilinearly at a full-size pixel centre (x, y) of a `fullWidth` x
 * `fullHeight` image, pixel centres aligned as when resizing: the fast guided filter's upsampling step,
 * done per pixel so no full-size float copy of a or b is ever made. The sampler writes a and b into `out`
 * ([a, b]) and returns it: no object per pixel, for the hundreds of thousands of a 12 MP photo's band.
 */
export function sampleCoefficients(
  c: GuidedCoefficients,
  fullWidth: number,
  fullHeight: number,
): (x: number, y: number, out: Float64Array) => Float64Array {
  const sx = c.width / fullWidth;
  const sy = c.height / fullHeight;
  const { a, b, width } = c;
  return (x, y, out) => {
    const fx = Math.min(width - 1, Math.max(0, (x + 0.5) * sx - 0.5));
    const fy = Math.min(c.height - 1, Math.max(0, (y + 0.5) * sy - 0.5));
    const x0 = Math.floor(fx);
    const y0 = Math.floor(fy);
    const x1 = Math.min(width - 1, x0 + 1);
    const y1 = Math.min(c.height - 1, y0 + 1);
    const tx = fx - x0;
    const ty = fy - y0;
    const i00 = y0 * width + x0;
    const i01 = y0 * width + x1;
    const i10 = y1 * width + x0;
    const i11 = y1 * width + x1;
    out[0] = (a[i00]! * (1 - tx) + a[i01]! * tx) * (1 - ty) + (a[i10]! * (1 - tx) + a[i11]! * tx) * ty;
    out[1] = (b[i00]! * (1 - tx) + b[i01]! * tx) * (1 - ty) + (b[i10]! * (1 - tx) + b[i11]! * tx) * ty;
    return out;
  };
}

/** Rec. 601 luma of interleaved 8-bit pixels, 0..1: the guide. */
export function lumaOf(pixels: Uint8Array, channels: number, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0, o = 0; i < n; i++, o += channels) {
    out[i] = (0.299 * pixels[o]! + 0.587 * pixels[o + 1]! + 0.114 * pixels[o + 2]!) / 255;
  }
  return out;
}
