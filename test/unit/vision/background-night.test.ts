import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { MaskFailedError } from '#core/errors.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import { openSource } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { matteStats, usableMatte } from '#vision/math/matte.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { mainCarCutout } from '#vision/operations/main-car.ts';
import { boxesPng, carsAt, paintingSegmenter, STUDIO_PARAMS } from '../../support/vision-scenes.ts';

// A car's rear at night filling a 240 x 120 frame, as ISNet sees it (the Romanian night frames): sure of
// the two lit lamps only, the body at alpha 50. NanoDet boxes a small car at the side, not this one.
const W = 240;
const H = 120;
const BODY: Box = { x: 30, y: 20, w: 180, h: 90 };
const SIDE_CAR: Box = { x: 2, y: 40, w: 20, h: 15 };

const night = () => boxesPng({ width: W, height: H }, '#100008', [{ box: BODY, colour: '#302028' }]);

const segmenter = paintingSegmenter([
  { box: BODY, alpha: 50 },
  { box: { x: 50, y: 50, w: 6, h: 6 }, alpha: 255 },
  { box: { x: 184, y: 50, w: 6, h: 6 }, alpha: 255 },
]);
const detector = (boxes: readonly Box[]): ObjectDetector => carsAt(boxes.map((box) => ({ box })));
const params = STUDIO_PARAMS;

describe('background on a car seen only faintly', () => {
  it('cuts out the car’s rear at night instead of refusing it with "no foreground"', async () => {
    const result = await replaceBackground(
      { segmenter, cars: detector([SIDE_CAR]) },
      await night(),
      params,
      null,
    );
    const { data } = await sharp(result.matte).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    expect(data[70 * W + 120]).toBe(255); // the body between the lamps
    expect(data[5 * W + 5]).toBe(0); // the night sky
  });

  it('still refuses (802) when no vehicle was seen: no cut-out is invented', async () => {
    const attempt = replaceBackground({ segmenter, cars: detector([]) }, await night(), params, null);
    await expect(attempt).rejects.toBeInstanceOf(MaskFailedError);
  });

  it('cuts out a car whose sure part clears the 1% bar in the model matte but not at the photo size', async () => {
    // Two 13 x 12 lamps (1.08% of the frame) over a faint body; the upscale to the photo's size takes two
    // pixels off every edge of the sure part (0.50%): a us street photo went from just over 1% to 0.9% so.
    const eroding = paintingSegmenter(
      [
        { box: BODY, alpha: 50 },
        { box: { x: 50, y: 50, w: 13, h: 12 }, alpha: 255 },
        { box: { x: 177, y: 50, w: 13, h: 12 }, alpha: 255 },
      ],
      async ({ width, height, alpha }) => {
        // An erosion: every edge moves two pixels inwards.
        const eroded = await sharp(alpha, { raw: { width, height, channels: 1 } })
          .erode(2)
          .raw()
          .toBuffer();
        return { width, height, alpha: new Uint8Array(eroded) };
      },
    );
    // Without the photo (no refinement) the upscale is the last word on the matte.
    const { matte } = await mainCarCutout(
      { segmenter: eroding, cars: detector([SIDE_CAR]) },
      await openSource(await night()),
    );
    expect(usableMatte(matteStats(matte)).ok).toBe(true);
    expect(matte.alpha[90 * W + 120]).toBe(255); // the body below the lamps
    expect(matte.alpha[5 * W + 5]).toBe(0); // the night sky
  });
});
