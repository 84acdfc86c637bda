import { describe, expect, it } from 'vitest';
import type { ObjectDetector } from '#vision/car-detector.ts';
import type { DecodedImage, SourceLevels } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { type DetectOptions, proposePlates } from '#vision/plate-proposals.ts';

// A 12 MP photo as levels: every decode is a blank image of the level's size (the passes are fakes).
const photo = { width: 4000, height: 3000 };
const levels: SourceLevels = {
  ...photo,
  format: 'image/jpeg',
  async atScale(scale) {
    const level = [1, 0.5, 0.25, 0.125].filter((l) => l >= scale).pop() ?? 1;
    const width = Math.round(photo.width * level);
    const height = Math.round(photo.height * level);
    return { width, height, channels: 3, format: 'image/jpeg', pixels: Buffer.alloc(0) } as DecodedImage;
  },
};
const CAR = 2;
const TRUCK = 7;
/** NanoDet's answer, given in source pixels; the fake scales it to the level it is handed. */
const carsAt = (found: { classId: number; box: Box }[]): ObjectDetector => ({
  modelVersion: 'fake',
  async detect(image) {
    const s = image.width / photo.width;
    return found.map(({ classId, box }) => ({
      classId,
      score: 0.9,
      box: { x: box.x * s, y: box.y * s, w: box.w * s, h: box.h * s },
    }));
  },
});

/** Every pass asked of the detector, by the region it reads (none: the whole photo). */
async function passesFor(cars: ObjectDetector) {
  const asked: DetectOptions[] = [];
  await proposePlates(
    async (_scale, options) => {
      asked.push(options);
      return [];
    },
    levels,
    { width: 640, height: 480 },
    cars,
  );
  return asked;
}

describe('proposePlates: the passes a photo gets', () => {
  it('reads a vehicle NanoDet boxed twice (car and truck) once', async () => {
    const van = { x: 1000, y: 1200, w: 1200, h: 900 };
    const asked = await passesFor(
      carsAt([
        { classId: CAR, box: van },
        { classId: TRUCK, box: { ...van, x: van.x + 30, w: van.w - 40 } },
      ]),
    );
    expect(asked.filter((o) => o.region)).toHaveLength(1);
  });

  it('reads far vehicles closer, but not one the whole-photo pass already sees large', async () => {
    const large = { x: 400, y: 600, w: 3200, h: 2000 }; // 80% of the width: 1.25 times the whole pass
    const far = { x: 200, y: 1400, w: 400, h: 300 };
    const asked = await passesFor(
      carsAt([
        { classId: CAR, box: large },
        { classId: CAR, box: far },
      ]),
    );
    expect(asked.filter((o) => o.region).map((o) => o.region)).toEqual([far]);
  });

  it('reads a small vehicle only a fine tile finds, not a wide box found there alone', async () => {
    // NanoDet answers only in the 3x3 tile at the photo's centre (0.42 of each side), in source pixels.
    const centre = { x: 1160, y: 870, w: 1680, h: 1260 };
    const small = { x: 1500, y: 1300, w: 500, h: 300 };
    const wide = { x: 1300, y: 1000, w: 1000, h: 800 };
    const inCentreTile = (found: Box[]): ObjectDetector => ({
      modelVersion: 'fake',
      async detect(image, options) {
        const s = image.width / photo.width;
        const r = options?.region;
        const atCentre = r && Math.abs(r.x / s - centre.x) < 8 && Math.abs(r.w / s - centre.w) < 8;
        if (!atCentre) return [];
        return found.map((box) => ({
          classId: CAR,
          score: 0.9,
          box: { x: box.x * s, y: box.y * s, w: box.w * s, h: box.h * s },
        }));
      },
    });
    const regions = async (found: Box[]) =>
      (await passesFor(inCentreTile(found))).filter((o) => o.region).map((o) => o.region);
    expect(await regions([small])).toEqual([small]);
    expect(await regions([wide])).toEqual([]);
  });

  it('looks for close-ups at half the whole pass’s input, unpadded', async () => {
    const asked = await passesFor(carsAt([]));
    expect(asked.filter((o) => !o.region).map((o) => [o.targetWidth, o.maxSide])).toEqual([
      [undefined, undefined],
      [320, 320],
    ]);
  });
});
