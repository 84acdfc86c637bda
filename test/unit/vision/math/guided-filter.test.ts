import { describe, expect, it } from 'vitest';
import {
  boxMean,
  guidedCoefficients,
  guidedFilter,
  lumaOf,
  sampleCoefficients,
} from '#vision/math/guided-filter.ts';

/** A guide with a vertical edge at column `edge` (dark left, light right), `w` x `h`. */
const stepGuide = (w: number, h: number, edge: number) => {
  const g = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) g[y * w + x] = x >= edge ? 0.9 : 0.1;
  return g;
};

describe('boxMean', () => {
  it('averages over the window clipped at the borders, so a constant stays constant', () => {
    const flat = new Float32Array(7 * 5).fill(0.4);
    for (const v of boxMean(flat, 7, 5, 3)) expect(v).toBeCloseTo(0.4, 6);
    const ramp = Float32Array.from({ length: 5 }, (_, i) => i);
    expect([...boxMean(ramp, 5, 1, 1)]).toEqual([0.5, 1, 2, 3, 3.5]);
  });

  it('refuses a buffer of the wrong size', () => {
    expect(() => boxMean(new Float32Array(3), 2, 2, 1)).toThrow(RangeError);
  });
});

describe('guidedFilter', () => {
  it('moves a blurred matte edge onto the guide’s edge', () => {
    const w = 40;
    const h = 8;
    const guide = stepGuide(w, h, 20);
    // The coarse matte: a ramp 8 px wide, centred 3 px off the true edge (an upscaled 1024 px matte).
    const p = new Float32Array(w * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) p[y * w + x] = Math.min(1, Math.max(0, (x - 13) / 8));
    const q = guidedFilter(guide, p, w, h, 6, 1e-3);
    const row = (x: number) => q[4 * w + x]!;
    // The step is where the photo's edge is (the input rises only 0.375 over these columns), and either
    // side of it the output changes less than the input's ramp did (0.375 over 3 columns).
    expect(row(20) - row(19)).toBeGreaterThan(0.5);
    expect(Math.abs(row(25) - row(22))).toBeLessThan(0.2);
    expect(Math.abs(row(18) - row(15))).toBeLessThan(0.2);
  });

  it('gives the input’s local mean where the guide is flat', () => {
    const w = 10;
    const h = 10;
    const guide = new Float32Array(w * h).fill(0.5);
    const p = Float32Array.from({ length: w * h }, (_, i) => (i % 2 ? 1 : 0));
    const q = guidedFilter(guide, p, w, h, 2, 1e-2);
    expect(q[55]!).toBeCloseTo(boxMean(boxMean(p, w, h, 2), w, h, 2)[55]!, 4);
  });
});

describe('the fast form', () => {
  it('applies coefficients fitted on a reduced copy at full size, following the full-size guide', () => {
    const small = guidedCoefficients(stepGuide(20, 4, 10), stepGuide(20, 4, 10), 20, 4, 2, 1e-4);
    const sample = sampleCoefficients(small, 80, 16);
    const fullGuide = (x: number) => (x >= 40 ? 0.9 : 0.1);
    // Far from the edge the guide's value maps to the matte's: about 0.1 and 0.9 back (a = 1, b = 0).
    const q = (x: number) => {
      const [a, b] = sample(x, 8, new Float64Array(2));
      return a! * fullGuide(x) + b!;
    };
    expect(q(5)).toBeCloseTo(0.1, 2);
    expect(q(75)).toBeCloseTo(0.9, 2);
    // At the edge itself the output steps within one full-size pixel, as the full-size guide does.
    expect(q(40) - q(39)).toBeGreaterThan(0.6);
  });

  it('reads luma from RGB or RGBA bytes', () => {
    const rgba = new Uint8Array([255, 255, 255, 0, 0, 0, 0, 255, 255, 0, 0, 255]);
    const luma = lumaOf(rgba, 4, 3);
    expect(luma[0]).toBeCloseTo(1, 5);
    expect(luma[1]).toBe(0);
    expect(luma[2]).toBeCloseTo(0.299, 5);
  });
});
