import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { JobParams } from '#core/jobs/job.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { Box } from '#vision/math/geometry.ts';
import type { Matte } from '#vision/math/matte.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { isolateMainCar } from '#vision/operations/main-car.ts';
import type { Segmenter } from '#vision/segmenter.ts';

// A street scene 240 x 120: the main car (red) in the middle, a parked car (blue) at the right edge,
// joined to it at bumper height, as ISNet often returns a row of parked cars.
const MAIN: Box = { x: 40, y: 40, w: 130, h: 60 };
const NEIGHBOUR: Box = { x: 176, y: 50, w: 60, h: 45 };
const W = 240;
const H = 120;

const scene = () =>
  sharp({ create: { width: W, height: H, channels: 3, background: '#707070' } })
    .composite([
      {
        input: { create: { width: MAIN.w, height: MAIN.h, channels: 3, background: '#c00000' } },
        left: MAIN.x,
        top: MAIN.y,
      },
      {
        input: { create: { width: NEIGHBOUR.w, height: NEIGHBOUR.h, channels: 3, background: '#0000c0' } },
        left: NEIGHBOUR.x,
        top: NEIGHBOUR.y,
      },
    ])
    .png()
    .toBuffer();

/** Foreground on both cars and on the bumper-height strip between them, at the image's size. */
const paintScene = async (image: { width: number; height: number }): Promise<Matte> => {
  const alpha = new Uint8Array(image.width * image.height);
  const paint = (b: Box) => {
    for (let y = b.y; y < b.y + b.h; y++) alpha.fill(255, y * image.width + b.x, y * image.width + b.x + b.w);
  };
  paint(MAIN);
  paint(NEIGHBOUR);
  paint({ x: MAIN.x + MAIN.w, y: 70, w: NEIGHBOUR.x - MAIN.x - MAIN.w, h: 6 });
  return { width: image.width, height: image.height, alpha } satisfies Matte;
};
const segmenter: Segmenter = {
  modelVersion: 'fake',
  segment: paintScene,
  modelMatte: paintScene,
  // The scene is smaller than the preview side, so the models see it at its own size.
  async toPhotoSize(matte, width, height) {
    expect([matte.width, matte.height]).toEqual([width, height]);
    return matte;
  },
};
const cars: ObjectDetector = {
  modelVersion: 'fake',
  detect: async () => [
    { classId: 2, score: 0.8, box: MAIN },
    { classId: 2, score: 0.9, box: NEIGHBOUR },
  ],
};
const params: Pick<JobParams, 'background' | 'plateColor' | 'plateSmoothing' | 'plateMaskOnly'> = {
  background: 'studio',
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
};

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
    const alpha = new Uint8Array(W * sx * H * sy);
    const paint = (b: Box) => {
      for (let y = b.y * sy; y < (b.y + b.h) * sy; y++)
        alpha.fill(255, y * W * sx + b.x * sx, y * W * sx + (b.x + b.w) * sx);
    };
    paint(MAIN);
    paint(NEIGHBOUR);
    paint({ x: MAIN.x + MAIN.w, y: 70, w: NEIGHBOUR.x - MAIN.x - MAIN.w, h: 6 });
    const matte: Matte = { width: W * sx, height: H * sy, alpha };
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
