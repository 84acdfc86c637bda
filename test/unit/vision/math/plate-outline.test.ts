import { describe, expect, it } from 'vitest';
import type { Point, Quad } from '#vision/math/geometry.ts';
import { grownPolygon, type Pixels, plateExtent, toPhotoEdge } from '#vision/math/plate-outline.ts';

const W = 200;
const H = 100;
/** A dark bumper (RGB 30) with rectangles painted on it. */
function scene(...rects: [x0: number, y0: number, x1: number, y1: number, v: number][]): Pixels {
  const pixels = new Uint8Array(W * H * 3).fill(30);
  for (const [x0, y0, x1, y1, v] of rects)
    for (let y = y0; y < y1; y++)
      for (let x = x0; x < x1; x++) pixels.fill(v, (y * W + x) * 3, (y * W + x) * 3 + 3);
  return { width: W, height: H, channels: 3, pixels };
}
const quad = (x0: number, y0: number, x1: number, y1: number): Quad => [
  { x: x0, y: y0 },
  { x: x1, y: y0 },
  { x: x1, y: y1 },
  { x: x0, y: y1 },
];
const xs = (q: readonly Point[]) => [Math.min(...q.map((p) => p.x)), Math.max(...q.map((p) => p.x))];

describe('plateExtent', () => {
  it('widens the quad over the part of the plate it missed (a country band), to where the plate ends', () => {
    // The plate runs 50-140; the detector boxed 70-140.
    const [x0, x1] = xs(plateExtent(scene([50, 40, 140, 60, 230]), quad(70, 40, 140, 60)));
    expect(x0).toBeGreaterThanOrEqual(48);
    expect(x0).toBeLessThanOrEqual(52);
    expect(x1).toBeCloseTo(140, 0);
  });

  it('stops at a lamp beside the plate: it stands out from the bumper, in a colour the plate has not', () => {
    // A white plate with dark characters at 40-120; a red lamp right after it.
    const image = scene([40, 40, 120, 60, 230], [60, 45, 70, 55, 0], [120, 40, 140, 60, 0]);
    for (let y = 40; y < 60; y++)
      for (let x = 120; x < 140; x++) image.pixels.set([200, 20, 20], (y * W + x) * 3);
    expect(xs(plateExtent(image, quad(40, 40, 120, 60)))[1]).toBeCloseTo(120, 0);
  });

  it('leaves the quad where the plate does not stand out from the bumper', () => {
    const white = { ...scene(), pixels: new Uint8Array(W * H * 3).fill(230) };
    expect(plateExtent(white, quad(70, 40, 140, 60))).toEqual(quad(70, 40, 140, 60));
  });

  it('leaves the quad where the band goes on past the reach (a strip of the car, not the plate)', () => {
    const strip = scene([0, 40, 200, 60, 230]);
    expect(plateExtent(strip, quad(80, 40, 130, 60))).toEqual(quad(80, 40, 130, 60));
  });

  it('carries a plate the photo’s edge cuts to that edge', () => {
    const [x0] = xs(plateExtent(scene([0, 40, 90, 60, 230]), quad(12, 40, 90, 60)));
    expect(x0).toBeLessThan(0);
  });
});

describe('grownPolygon', () => {
  it('pushes every edge out by the same distance, corners mitred', () => {
    const grown = grownPolygon(quad(10, 10, 50, 30), 2);
    expect(xs(grown)).toEqual([8, 52]);
    expect(Math.min(...grown.map((p) => p.y))).toBeCloseTo(8);
    expect(Math.max(...grown.map((p) => p.y))).toBeCloseTo(32);
  });
});

describe('toPhotoEdge', () => {
  it('carries a polygon within reach of the edge past it, and leaves one farther in alone', () => {
    const size = { width: W, height: H };
    expect(xs(toPhotoEdge(quad(3, 40, 50, 60), size, 5))[0]).toBeLessThan(0);
    expect(toPhotoEdge(quad(10, 40, 50, 60), size, 5)).toEqual(quad(10, 40, 50, 60));
  });
});
