import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { Quad } from '#vision/math/geometry.ts';
import { encodeMask, plateMask } from '#vision/operations/masks.ts';
import { plateShapes } from '#vision/plate-fill.ts';

const size = { width: 120, height: 80 };
const rect: Quad = [
  { x: 40, y: 30 },
  { x: 80, y: 30 },
  { x: 80, y: 40 },
  { x: 40, y: 40 },
];
const count = (alpha: Uint8Array, v: number) => alpha.reduce((n, a) => n + (a === v ? 1 : 0), 0);

describe('plateMask', () => {
  it('is white exactly on the quad with plate_mask_only, black everywhere else', () => {
    const m = plateMask(size, plateShapes(size, [rect], { smoothing: true, maskOnly: true }));
    expect(m.alpha.length).toBe(120 * 80);
    expect(count(m.alpha, 255)).toBe(40 * 10);
    expect(count(m.alpha, 0)).toBe(120 * 80 - 40 * 10);
  });

  it('grows and softens like the plate fill with smoothing', () => {
    const m = plateMask(size, plateShapes(size, [rect], { smoothing: true, maskOnly: false }));
    expect(count(m.alpha, 255)).toBeGreaterThan(40 * 10);
    expect(m.alpha[35 * 120 + 60]).toBe(255);
    expect(m.alpha[5 * 120 + 5]).toBe(0);
    expect(m.alpha.some((a) => a > 0 && a < 255)).toBe(true);
  });

  it('clips plates at the frame edge and draws several', () => {
    const edge: Quad = [
      { x: 100, y: 70 },
      { x: 130, y: 70 },
      { x: 130, y: 90 },
      { x: 100, y: 90 },
    ];
    const m = plateMask(size, plateShapes(size, [rect, edge], { smoothing: false, maskOnly: false }));
    expect(count(m.alpha, 255)).toBe(40 * 10 + 20 * 10);
  });
});

describe('encodeMask', () => {
  it('writes an 8-bit single-channel PNG of the same size with no metadata', async () => {
    const m = plateMask(size, plateShapes(size, [rect], { smoothing: false, maskOnly: true }));
    const png = await encodeMask(m);
    const meta = await sharp(png).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 120, height: 80, channels: 1, depth: 'uchar' });
    expect(meta.exif).toBeUndefined();
    expect(meta.icc).toBeUndefined();
    const back = await sharp(png).extractChannel(0).raw().toBuffer();
    expect(Buffer.compare(back, Buffer.from(m.alpha))).toBe(0);
  });
});
