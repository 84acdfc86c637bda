import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { openSource } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { boxInPhoto, isolateMainCar } from '#vision/operations/main-car.ts';
import {
  boxesPng,
  carsAt,
  paintedMatte,
  paintingSegmenter,
  STUDIO_PARAMS,
} from '../../support/vision-scenes.ts';

// A street scene 240 x 120: the main car (red) in the middle, a parked car (blue) at the right edge,
// joined to it at bumper height, as ISNet often returns a row of parked cars.
const MAIN: Box = { x: 40, y: 40, w: 130, h: 60 };
const NEIGHBOUR: Box = { x: 176, y: 50, w: 60, h: 45 };
const W = 240;
const H = 120;

const scene = () =>
  boxesPng({ width: W, height: H }, '#707070', [
    { box: MAIN, colour: '#c00000' },
    { box: NEIGHBOUR, colour: '#0000c0' },
  ]);

/** Both cars and the bumper-height strip between them, as ISNet returns a row of parked cars. */
const JOINED = [MAIN, NEIGHBOUR, { x: MAIN.x + MAIN.w, y: 70, w: NEIGHBOUR.x - MAIN.x - MAIN.w, h: 6 }].map(
  (box) => ({ box, alpha: 255 }),
);

/** Foreground on both cars and on the strip between them, at the image's size. */
const segmenter = paintingSegmenter(JOINED, async (matte, width, height) => {
  // The scene is smaller than the preview side, so the models see it at its own size.
  expect([matte.width, matte.height]).toEqual([width, height]);
  return matte;
});
const cars = carsAt([
  { box: MAIN, score: 0.8 },
  { box: NEIGHBOUR, score: 0.9 },
]);
const params = STUDIO_PARAMS;

const rgb = async (png: Buffer, x: number, y: number) => {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const o = (y * info.width + x) * info.channels;
  return [...data.subarray(o, o + Math.min(3, info.channels))];
};

describe('replaceBackground keeps only the main car', () => {
  it('puts the parked neighbour on the backdrop with the rest of the street, the main car untouched', async () => {
    const result = await replaceBackground({ segmenter, cars }, await scene(), params, null);
    const [r, g, b] = await rgb(result.image, NEIGHBOUR.x + 30, NEIGHBOUR.y + 20);
    expect(b! - Math.max(r!, g!)).toBeLessThan(20); // no longer blue: backdrop
    expect(await rgb(result.image, MAIN.x + 60, MAIN.y + 30)).toEqual([0xc0, 0, 0]);
    expect((await rgb(result.matte, NEIGHBOUR.x + 30, NEIGHBOUR.y + 20))[0]).toBe(0);
    expect((await rgb(result.matte, MAIN.x + 60, MAIN.y + 30))[0]).toBe(255);
  });

  it('without a car detector the segmenter decides, neighbour included', async () => {
    const result = await replaceBackground({ segmenter }, await scene(), params, null);
    expect((await rgb(result.matte, NEIGHBOUR.x + 30, NEIGHBOUR.y + 20))[0]).toBe(255);
  });
});

describe('isolateMainCar on a matte at the model size', () => {
  it('scales the boxes axis by axis to a squeezed matte and clears the neighbour there', async () => {
    // ISNet's matte covers the whole photo at 1024 x 1024 whatever its shape: here 2x wide, 4x tall.
    const sx = 2;
    const sy = 4;
    const matte = paintedMatte({ width: W, height: H }, JOINED, { x: sx, y: sy });
    const { alpha } = matte;
    const image = {
      width: W,
      height: H,
      channels: 3 as const,
      format: 'image/png' as const,
      pixels: Buffer.alloc(0),
    };
    const found = await isolateMainCar(cars, image, matte);
    expect(found.box).toEqual(MAIN);
    const at = (x: number, y: number) => alpha[y * sy * W * sx + x * sx]!;
    expect(at(NEIGHBOUR.x + 30, NEIGHBOUR.y + 20)).toBe(0);
    expect(at(MAIN.x + 60, MAIN.y + 30)).toBe(255);
    expect(at(MAIN.x + 2, MAIN.y + 2)).toBe(255);
  });
});

describe('boxInPhoto', () => {
  it("maps a box from the models' shrink-on-load copy to the photo: a 4000 x 3000 JPEG is seen at half size", async () => {
    const jpeg = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    // 1024 / 3000 asks for about a third; a JPEG shrinks on load by 2, 4 or 8, so the copy is 2000 wide.
    expect(await boxInPhoto({ x: 100, y: 50, w: 300, h: 200 }, await openSource(jpeg))).toEqual({
      x: 200,
      y: 100,
      w: 600,
      h: 400,
    });
  });
});
