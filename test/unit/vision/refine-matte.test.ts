import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Matte } from '#vision/math/matte.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { alphaCutout } from '#vision/operations/main-car.ts';
import { DEFAULT_REFINE, refineMatte } from '#vision/refine.ts';
import type { Segmenter } from '#vision/segmenter.ts';

const W = 400;
const H = 200;

/** A dark body from column 100 to 299 on a light wall: the photo's own edge. */
function photo(): DecodedImage {
  const pixels = Buffer.alloc(W * H * 3, 220);
  for (let y = 40; y < 160; y++) pixels.fill(30, (y * W + 100) * 3, (y * W + 300) * 3);
  return { width: W, height: H, channels: 3, format: 'image/jpeg', pixels };
}

/** The model's matte at half the size, its edges `shift` px (full size) right of the photo's. */
function smallMatte(shift: number): Matte {
  const w = W / 2;
  const h = H / 2;
  const alpha = new Uint8Array(w * h);
  for (let y = 20; y < 80; y++) {
    for (let x = 0; x < w; x++) {
      const full = x * 2 + 1;
      if (full >= 100 + shift && full < 300 + shift) alpha[y * w + x] = 255;
    }
  }
  return { width: w, height: h, alpha };
}

async function coarseOf(small: Matte): Promise<Matte> {
  const data = await sharp(small.alpha, { raw: { width: small.width, height: small.height, channels: 1 } })
    .resize(W, H, { fit: 'fill', kernel: 'cubic' })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  return { width: W, height: H, alpha: new Uint8Array(data) };
}

/** The first column of row 100 at or above 128, from the left. */
const leftEdge = (m: Matte) => {
  for (let x = 0; x < W; x++) if (m.alpha[100 * W + x]! >= 128) return x;
  return -1;
};

describe('refineMatte', () => {
  it('with a wider window and a softer feather, moves an edge a few pixels off onto the photo’s own', async () => {
    const small = smallMatte(3);
    const coarse = await coarseOf(small);
    expect(leftEdge(coarse) - 100).toBeGreaterThanOrEqual(2);
    const refined = await refineMatte(small, photo(), coarse, {
      ...DEFAULT_REFINE,
      radius: 4,
      feather: { low: 32, high: 144 },
    });
    expect(Math.abs(leftEdge(refined) - 100)).toBeLessThanOrEqual(1);
  });

  it('with the shipped settings, keeps an edge that agrees with the photo, solid car solid, clear background clear', async () => {
    const small = smallMatte(0);
    const coarse = await coarseOf(small);
    const refined = await refineMatte(small, photo(), coarse);
    expect(Math.abs(leftEdge(refined) - 100)).toBeLessThanOrEqual(1);
    expect(refined.alpha[100 * W + 200]).toBe(255);
    expect(refined.alpha[100 * W + 20]).toBe(0);
    // Outside the uncertain band nothing changed.
    expect(refined.alpha[10 * W + 200]).toBe(coarse.alpha[10 * W + 200]);
  });
});

describe('a PNG already cut out', () => {
  const cutout = () => {
    const pixels = Buffer.alloc(W * H * 4);
    for (let y = 60; y < 150; y++) {
      for (let x = 120; x < 280; x++) pixels.set([200, 20, 20, 255], (y * W + x) * 4);
    }
    return sharp(pixels, { raw: { width: W, height: H, channels: 4 } })
      .png()
      .toBuffer();
  };

  it('keeps its own alpha as the matte, never asking the segmenter', async () => {
    const refuse = async (): Promise<Matte> => {
      throw new Error('the segmenter was asked');
    };
    const segmenter: Segmenter = {
      modelVersion: 'x',
      segment: refuse,
      modelMatte: refuse,
      toPhotoSize: refuse,
    };
    const out = await replaceBackground(
      { segmenter },
      await cutout(),
      { background: 'transparent', plateColor: '#141414', plateSmoothing: true, plateMaskOnly: false },
      null,
    );
    const { data } = await sharp(out.matte).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    expect(data[100 * W + 200]).toBe(255);
    expect(data[100 * W + 20]).toBe(0);
    expect(out.composition.notes.join(' ')).toMatch(/own transparency/);
  });

  it('treats an alpha channel opaque throughout as a photo', () => {
    const opaque = {
      width: 2,
      height: 2,
      channels: 4 as const,
      format: 'image/png' as const,
      pixels: Buffer.alloc(16, 255),
    };
    expect(alphaCutout(opaque)).toBeNull();
  });
});
