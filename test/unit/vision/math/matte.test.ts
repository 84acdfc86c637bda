import { describe, expect, it } from 'vitest';
import { MaskFailedError } from '#core/errors.ts';
import {
  ambientShadow,
  assertUsableMatte,
  clearSpecks,
  contactShadow,
  featherAlpha,
  featherTable,
  horizonRow,
  matteStats,
  probabilitiesToAlpha,
} from '#vision/math/matte.ts';
import { blank, paint } from './matte-fixtures.ts';

/** A car seen from the side: a body from x 20..180, rows 40..90, and two wheels down to row 100. */
const sideCar = () => {
  const m = blank(200, 120);
  paint(m, 20, 40, 180, 90);
  paint(m, 35, 90, 65, 100);
  paint(m, 135, 90, 165, 100);
  return m;
};

describe('probabilitiesToAlpha', () => {
  it('maps 0..1 to 0..255, clamping whatever the model overshoots', () => {
    expect([...probabilitiesToAlpha([-0.2, 0, 0.5, 1, 1.3, Number.NaN])]).toEqual([0, 0, 128, 255, 255, 0]);
  });
});

describe('featherAlpha', () => {
  it('clears the halo below low, makes the car solid above high, and ramps smoothly between', () => {
    const table = featherTable({ low: 96, high: 224 });
    expect(table[0]).toBe(0);
    expect(table[96]).toBe(0);
    expect(table[224]).toBe(255);
    expect(table[255]).toBe(255);
    expect(table[160]).toBe(128);
    for (let v = 1; v < 256; v++) expect(table[v]!).toBeGreaterThanOrEqual(table[v - 1]!);
  });

  it('rewrites the buffer in place', () => {
    const alpha = Uint8Array.from([10, 100, 160, 230]);
    featherAlpha(alpha);
    expect(alpha[0]).toBe(0);
    expect(alpha[1]).toBeLessThan(5);
    expect(alpha[2]).toBe(128);
    expect(alpha[3]).toBe(255);
  });

  it('refuses an empty or inverted range', () => {
    expect(() => featherTable({ low: 200, high: 100 })).toThrow(RangeError);
  });
});

describe('clearSpecks', () => {
  it('clears islands far smaller than the car and keeps the car and a second large object', () => {
    const m = paint(paint(paint(blank(100, 100), 10, 10, 60, 60), 70, 70, 72, 72), 70, 10, 95, 40);
    const cleared = clearSpecks(m, { minShareOfLargest: 0.02 });
    expect(cleared).toBe(4);
    expect(m.alpha[71 * 100 + 71]).toBe(0);
    expect(m.alpha[30 * 100 + 30]).toBe(255);
    expect(m.alpha[20 * 100 + 80]).toBe(255);
  });

  it('joins diagonal neighbours, so a thin antenna stays attached to the roof', () => {
    const m = paint(blank(60, 60), 10, 30, 50, 50);
    for (let i = 0; i < 20; i++) m.alpha[(29 - i) * 60 + 30 + i] = 200; // a diagonal line off the roof
    clearSpecks(m);
    expect(m.alpha[(29 - 19) * 60 + 49]).toBe(200);
  });

  it('leaves faint haze (at or below the threshold) as it is: the feather deals with it', () => {
    const m = paint(paint(blank(50, 50), 0, 0, 40, 40), 45, 45, 46, 46, 20);
    clearSpecks(m, { threshold: 32 });
    expect(m.alpha[45 * 50 + 45]).toBe(20);
  });
});

describe('matteStats', () => {
  it('measures coverage, the box, the ground line and the footprint', () => {
    const stats = matteStats(sideCar());
    expect(stats.coverage).toBeCloseTo((160 * 50 + 2 * 30 * 10) / (200 * 120), 6);
    expect(stats.box).toEqual({ x: 20, y: 40, w: 160, h: 60 });
    expect(stats.groundY).toBe(100);
    // The footprint band reaches 12% of the height (7.2 rows) above the ground: the wheels only.
    expect(stats.footprint).toEqual({ x0: 35, x1: 165 });
    expect(stats.columnBottoms[50]).toBe(99);
    expect(stats.columnBottoms[100]).toBe(89);
    expect(stats.columnBottoms[5]).toBe(-1);
  });

  it('does not let a stray pixel under the car lower the ground line', () => {
    const m = sideCar();
    m.alpha[115 * 200 + 100] = 255;
    expect(matteStats(m).groundY).toBe(100);
  });

  it('counts only alpha of 128 and above', () => {
    const stats = matteStats(paint(paint(blank(10, 10), 0, 0, 10, 5, 127), 0, 5, 10, 10, 128));
    expect(stats.coverage).toBe(0.5);
    expect(stats.box).toEqual({ x: 0, y: 5, w: 10, h: 5 });
  });

  it('has no box on an empty matte', () => {
    const stats = matteStats(blank(10, 10));
    expect(stats).toMatchObject({ coverage: 0, box: null, footprint: null });
  });
});

describe('assertUsableMatte (802)', () => {
  const withCoverage = (share: number) => {
    const m = blank(100, 100);
    m.alpha.fill(255, 0, Math.round(share * 10_000));
    return matteStats(m);
  };

  it('fails with code 802 when nothing, or next to nothing, was found', () => {
    for (const share of [0, 0.005]) {
      const error = (() => {
        try {
          assertUsableMatte(withCoverage(share));
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(MaskFailedError);
      expect((error as MaskFailedError).code).toBe(802);
      expect((error as MaskFailedError).status).toBe(422);
    }
  });

  it('fails when the mask takes the whole frame', () => {
    expect(() => assertUsableMatte(withCoverage(0.99))).toThrow(/could not be told apart/);
  });

  it('accepts anything in between, edges included', () => {
    for (const share of [0.01, 0.3, 0.98]) expect(() => assertUsableMatte(withCoverage(share))).not.toThrow();
  });
});

describe('ambientShadow', () => {
  it('is a flat ellipse along the footprint, mostly behind the ground line', () => {
    const s = ambientShadow(matteStats(sideCar()))!;
    expect(s.cx).toBe(100);
    expect(s.rx).toBeCloseTo(65 * 1.1, 6);
    expect(s.ry).toBeLessThan(s.rx / 4);
    expect(s.cy).toBeLessThan(100);
    expect(s.cy + s.ry).toBeGreaterThan(100);
    expect(s.opacity).toBeGreaterThan(0);
    expect(s.opacity).toBeLessThan(1);
  });

  it('is absent without a car', () => {
    expect(ambientShadow(matteStats(blank(10, 10)))).toBeNull();
  });
});

describe('contactShadow', () => {
  it('is darkest under the wheels, on the ground line, and fades above and below it', () => {
    const layer = contactShadow(matteStats(sideCar()))!;
    const at = (x: number, y: number) => layer.alpha[(y - layer.top) * layer.width + (x - layer.left)]!;
    const peakRow = (x: number) => {
      let best = layer.top;
      for (let y = layer.top; y < layer.top + layer.height; y++) if (at(x, y) > at(x, best)) best = y;
      return best;
    };
    const row = peakRow(50);
    expect(Math.abs(row - 99)).toBeLessThanOrEqual(1);
    expect(at(50, row)).toBeGreaterThan(100);
    expect(at(150, row)).toBe(at(50, row));
    // Under the sill between the wheels the car does not touch the floor.
    expect(at(100, row)).toBeLessThan(at(50, row) / 4);
    expect(at(50, layer.top)).toBeLessThan(at(50, row) / 3);
    expect(layer.left).toBeLessThan(35);
    expect(layer.left + layer.width).toBeGreaterThan(165);
  });

  it('stays inside the frame when the car touches its bottom edge', () => {
    const m = paint(blank(100, 50), 10, 20, 90, 50);
    const layer = contactShadow(matteStats(m))!;
    expect(layer.top + layer.height).toBeLessThanOrEqual(50);
    expect(layer.left).toBeGreaterThanOrEqual(0);
    expect(layer.left + layer.width).toBeLessThanOrEqual(100);
    expect(layer.alpha.length).toBe(layer.width * layer.height);
  });
});

describe('horizonRow', () => {
  it('puts the floor line behind the lower body, above the wheels', () => {
    const y = horizonRow(matteStats(sideCar()));
    expect(y).toBe(Math.round(100 - 0.42 * 60));
  });

  it('keeps the horizon in the frame and above the wheels for a car low in a tall frame', () => {
    const m = paint(blank(100, 400), 10, 380, 90, 400);
    const y = horizonRow(matteStats(m));
    expect(y).toBeLessThan(400 - 0.06 * 20);
    expect(y).toBeGreaterThan(0);
  });

  it('falls back to a fixed share of the height without a car', () => {
    expect(horizonRow(matteStats(blank(10, 100)))).toBe(62);
  });
});
