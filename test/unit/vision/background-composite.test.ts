import { describe, expect, it } from 'vitest';
import { compositeOver } from '#vision/composite.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Matte } from '#vision/math/matte.ts';

const W = 4;
const H = 2;
const image = (channels: 3 | 4, fill: number[]): DecodedImage => {
  const pixels = Buffer.alloc(W * H * channels);
  for (let i = 0; i < W * H; i++) pixels.set(fill, i * channels);
  return { width: W, height: H, channels, format: channels === 4 ? 'image/png' : 'image/jpeg', pixels };
};
const matte = (values: number[]): Matte => ({ width: W, height: H, alpha: Uint8Array.from(values) });
const backdrop = () => {
  const b = Buffer.alloc(W * H * 3);
  for (let i = 0; i < W * H; i++) b.set([10, 20, 30], i * 3);
  return b;
};
const px = (img: DecodedImage, i: number) => [
  ...img.pixels.subarray(i * img.channels, (i + 1) * img.channels),
];

describe('compositeOver', () => {
  it('keeps car pixels where the matte is solid, takes the backdrop where it is empty, mixes between', () => {
    const img = image(3, [200, 100, 50]);
    compositeOver(img, matte([255, 0, 128, 64, 255, 255, 0, 0]), backdrop());
    expect(px(img, 0)).toEqual([200, 100, 50]);
    expect(px(img, 1)).toEqual([10, 20, 30]);
    expect(px(img, 2)).toEqual([
      Math.round(10 + (190 * 128) / 255),
      Math.round(20 + (80 * 128) / 255),
      Math.round(30 + (20 * 128) / 255),
    ]);
    expect(px(img, 3)).toEqual([
      Math.round(10 + (190 * 64) / 255),
      Math.round(20 + (80 * 64) / 255),
      Math.round(30 + (20 * 64) / 255),
    ]);
  });

  it('never writes a solid car pixel, even with grain on the backdrop', () => {
    const img = image(3, [7, 8, 9]);
    compositeOver(img, matte([255, 255, 0, 0, 255, 255, 0, 0]), backdrop(), { dither: 2 });
    expect(px(img, 0)).toEqual([7, 8, 9]);
    expect(px(img, 4)).toEqual([7, 8, 9]);
    for (const i of [2, 3, 6, 7]) {
      px(img, i).forEach((v, c) => {
        expect(Math.abs(v - [10, 20, 30][c]!)).toBeLessThanOrEqual(2);
      });
    }
  });

  it('treats transparency in a PNG source as background and makes the result opaque', () => {
    const img = image(4, [200, 100, 50, 255]);
    img.pixels[4 * 1 + 3] = 0; // pixel 1 fully transparent although the matte says car
    compositeOver(img, matte([255, 255, 0, 0, 0, 0, 0, 0]), backdrop());
    expect(px(img, 0)).toEqual([200, 100, 50, 255]);
    expect(px(img, 1)).toEqual([10, 20, 30, 255]);
    expect(px(img, 2)).toEqual([10, 20, 30, 255]);
  });

  it('refuses a matte or backdrop of another size', () => {
    expect(() =>
      compositeOver(image(3, [0, 0, 0]), { width: 2, height: 2, alpha: new Uint8Array(4) }, backdrop()),
    ).toThrow(RangeError);
    expect(() => compositeOver(image(3, [0, 0, 0]), matte(Array(8).fill(0)), Buffer.alloc(3))).toThrow(
      RangeError,
    );
  });
});
