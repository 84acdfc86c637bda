import { describe, expect, it } from 'vitest';
import type { Box } from '#vision/math/geometry.ts';
import type { Matte } from '#vision/math/matte.ts';
import { matteProxies } from '../../eval/matte-proxies.ts';

const W = 200;
const H = 120;
const blank = (): Matte => ({ width: W, height: H, alpha: new Uint8Array(W * H) });
const paint = (matte: Matte, box: Box, value = 255) => {
  for (let y = box.y; y < box.y + box.h; y++) matte.alpha.fill(value, y * W + box.x, y * W + box.x + box.w);
  return matte;
};
const CAR: Box = { x: 40, y: 40, w: 120, h: 50 };

describe('studio matte proxies on constructed scenes', () => {
  it('a whole, solid car in its box scores nothing', () => {
    expect(matteProxies(paint(blank(), CAR), CAR)).toEqual({
      outside: 0,
      holes: 0,
      enclosed: 0,
      detached: 0,
    });
  });

  it('a pole standing on the roof counts as outside the car’s box, not as detached', () => {
    const matte = paint(paint(blank(), CAR), { x: 100, y: 0, w: 6, h: 40 });
    const proxies = matteProxies(matte, CAR);
    // The pole's 6 x 40 px, less the 5 rows within the 10% margin above the box: 210 of 6240 px.
    expect(proxies.outside).toBeCloseTo((6 * 35) / (120 * 50 + 6 * 40), 4);
    expect(proxies.detached).toBe(0);
  });

  it('a hole in a door counts as a hole, enclosed; a notch at the edge only in the convex share', () => {
    const door = paint(paint(blank(), CAR), { x: 80, y: 55, w: 10, h: 10 }, 0);
    const withHole = matteProxies(door, CAR);
    expect(withHole.enclosed).toBeCloseTo(100 / (6000 - 100), 4);
    expect(withHole.holes).toBeCloseTo(100 / 6000, 4);
    const notch = paint(paint(blank(), CAR), { x: 80, y: 80, w: 10, h: 10 }, 0);
    const withNotch = matteProxies(notch, CAR);
    expect(withNotch.enclosed).toBe(0);
    expect(withNotch.holes).toBeCloseTo(100 / 6000, 4);
  });

  it('exhaust tips floating under the bumper are detached foreground', () => {
    const matte = paint(paint(blank(), CAR), { x: 50, y: 91, w: 10, h: 4 });
    const proxies = matteProxies(matte, CAR);
    expect(proxies.detached).toBeCloseTo(40 / 6040, 4);
    expect(proxies.outside).toBe(0);
  });
});
