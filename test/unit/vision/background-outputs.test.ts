import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { CENTER_FRAMING } from '#core/jobs/job.ts';
import { encodeResult } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { mainCarChoice } from '#vision/math/main-subject.ts';
import { matteStats } from '#vision/math/matte.ts';
import {
  canvasSize,
  centerPlacement,
  edgesCuttingCar,
  keptPlacement,
  placeBox,
} from '#vision/math/placement.ts';
import { type ReplaceBackgroundParams, replaceBackground } from '#vision/operations/background.ts';
import { carsAt, paintingSegmenter } from '../../support/vision-scenes.ts';

const W = 320;
const H = 200;

/** A grey street 320 x 200 with a red "car" in `car`; the fake segmenter paints exactly that box. */
const photo = (car: Box) => photoOfSize(car, W, H);

const segmenterOf = (car: Box) => paintingSegmenter([{ box: car, alpha: 255 }]);

/** The same scene in a photo of any size (a portrait one, say). */
const photoOfSize = (car: Box, width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#707070' } })
    .composite([
      {
        input: { create: { width: car.w, height: car.h, channels: 3, background: '#c00000' } },
        left: car.x,
        top: car.y,
      },
    ])
    .jpeg({ quality: 95 })
    .toBuffer();

const params = (extra: Partial<ReplaceBackgroundParams> = {}): ReplaceBackgroundParams => ({
  background: 'studio',
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  ...extra,
});

const raw = async (bytes: Buffer) => sharp(bytes).raw().toBuffer({ resolveWithObject: true });
const boxOfMatte = async (png: Buffer) => {
  const { data, info } = await raw(png);
  const alpha = new Uint8Array(info.width * info.height);
  for (let i = 0; i < alpha.length; i++) alpha[i] = data[i * info.channels]!;
  return matteStats({ width: info.width, height: info.height, alpha });
};

const SMALL_LEFT: Box = { x: 20, y: 90, w: 100, h: 50 };

describe('background: transparent', () => {
  it('gives a PNG whose alpha is the car: opaque on it, clear everywhere else, no shadow unless asked', async () => {
    const result = await replaceBackground(
      { segmenter: segmenterOf(SMALL_LEFT) },
      await photo(SMALL_LEFT),
      params({ background: 'transparent' }),
      null,
    );
    expect(result.contentType).toBe('image/png');
    const { data, info } = await raw(result.image);
    expect(info.channels).toBe(4);
    const alphaAt = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect(alphaAt(70, 115)).toBe(255);
    expect(alphaAt(200, 20)).toBe(0);
    // Just under the wheels: nothing without a shadow.
    expect(alphaAt(70, SMALL_LEFT.y + SMALL_LEFT.h + 1)).toBe(0);
  });

  it('with shadow: true, a soft dark shadow on alpha under the car, and WEBP keeps the alpha', async () => {
    const result = await replaceBackground(
      { segmenter: segmenterOf(SMALL_LEFT) },
      await photo(SMALL_LEFT),
      params({ background: 'transparent', shadow: true, format: 'webp' }),
      null,
    );
    expect(result.contentType).toBe('image/webp');
    const { data, info } = await raw(result.image);
    expect(info.channels).toBe(4);
    const under = (SMALL_LEFT.y + SMALL_LEFT.h) * info.width + 40;
    expect(data[under * 4 + 3]).toBeGreaterThan(20);
    expect(data[under * 4]).toBeLessThan(40);
  });
});

describe('format and max_width', () => {
  it('encodes as asked, never wider than max_width, the matte at the same size', async () => {
    const result = await replaceBackground(
      { segmenter: segmenterOf(SMALL_LEFT) },
      await photo(SMALL_LEFT),
      params({ format: 'png', maxWidth: 160 }),
      null,
    );
    expect(result.contentType).toBe('image/png');
    expect([result.width, result.height]).toEqual([160, 100]);
    const meta = await sharp(result.image).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 160, 100]);
    expect((await sharp(result.matte).metadata()).width).toBe(160);
  });

  it('never enlarges, and a JPEG of a 4-channel image is put on white', async () => {
    const rgba = {
      width: 4,
      height: 2,
      channels: 4 as const,
      format: 'image/png' as const,
      pixels: Buffer.alloc(32, 0),
    };
    const jpeg = await encodeResult(rgba, { format: 'jpg', maxWidth: 100 });
    expect([jpeg.contentType, jpeg.width]).toEqual(['image/jpeg', 4]);
    const { data } = await raw(jpeg.data);
    expect(data[0]).toBeGreaterThan(240);
  });
});

describe('framing: center', () => {
  it('puts a small car at the far left in the middle of a 4:3 canvas, 80% of the width, wheels on the floor line', async () => {
    const result = await replaceBackground(
      { segmenter: segmenterOf(SMALL_LEFT), cars: carsAt([{ box: SMALL_LEFT, score: 0.9 }]) },
      await photo(SMALL_LEFT),
      params({ framing: 'center' }),
      null,
    );
    expect(result.composition).toMatchObject({
      framing: 'center',
      aspect: '4:3',
      car_cut_by_edge: [],
      vehicles: 1,
    });
    // The 320 x 200 photo's pixel count, at most, in the default 4:3.
    const [cw, ch] = [result.width, result.height];
    expect(cw * 3).toBe(ch * 4);
    expect(cw * ch).toBeLessThanOrEqual(W * H);
    expect(cw * ch).toBeGreaterThan(0.95 * W * H);
    const { box, groundY } = await boxOfMatte(result.matte);
    const centre = box!.x + box!.w / 2;
    expect(Math.abs(centre - cw / 2) / cw).toBeLessThan(0.03);
    expect(box!.w / cw).toBeCloseTo(CENTER_FRAMING.widthShare, 1);
    expect(Math.abs(groundY - CENTER_FRAMING.floorLine * ch)).toBeLessThanOrEqual(2);
    // The car's pixels came along: red where the matte is solid.
    const { data, info } = await raw(result.image);
    const o = (Math.round(groundY - 10) * info.width + Math.round(centre)) * 3;
    expect(data[o]! - data[o + 1]!).toBeGreaterThan(120);
  });

  it('turns a portrait photo into the landscape canvas, the car framed as in a landscape photo', async () => {
    const car: Box = { x: 20, y: 200, w: 160, h: 70 };
    const result = await replaceBackground(
      { segmenter: segmenterOf(car), cars: carsAt([{ box: car, score: 0.9 }]) },
      await photoOfSize(car, 200, 300),
      params({ framing: 'center', aspect: '3:2' }),
      null,
    );
    expect(result.composition.aspect).toBe('3:2');
    expect([result.width, result.height]).toEqual([300, 200]);
    const { box, groundY } = await boxOfMatte(result.matte);
    expect(box!.w / result.width).toBeCloseTo(CENTER_FRAMING.widthShare, 1);
    expect(Math.abs(groundY - CENTER_FRAMING.floorLine * result.height)).toBeLessThanOrEqual(2);
    expect((await sharp(result.image).metadata()).width).toBe(300);
  });

  it('keeps the photo’s shape with aspect: keep', async () => {
    const result = await replaceBackground(
      { segmenter: segmenterOf(SMALL_LEFT), cars: carsAt([{ box: SMALL_LEFT, score: 0.9 }]) },
      await photo(SMALL_LEFT),
      params({ framing: 'center', aspect: 'keep' }),
      null,
    );
    expect([result.width, result.height, result.composition.aspect]).toEqual([W, H, 'keep']);
  });

  it('keeps a car cut by the photo’s edge against that edge, on the canvas asked, and says so', async () => {
    const cut: Box = { x: 0, y: 90, w: 120, h: 50 };
    const run = async (aspect?: '4:3' | 'keep') =>
      replaceBackground(
        { segmenter: segmenterOf(cut), cars: carsAt([{ box: cut, score: 0.9 }]) },
        await photo(cut),
        params({ framing: 'center', ...(aspect ? { aspect } : {}) }),
        null,
      );
    const onCanvas = await run();
    expect(onCanvas.composition).toMatchObject({ framing: 'keep', aspect: '4:3', car_cut_by_edge: ['left'] });
    expect(onCanvas.composition.notes.join(' ')).toMatch(
      /left edge cuts the car.*same edge of the 4:3 canvas/,
    );
    expect(onCanvas.width * 3).toBe(onCanvas.height * 4);
    // Never enlarged: the same 120 px of car, still against the left edge.
    expect((await boxOfMatte(onCanvas.matte)).box).toMatchObject({ x: 0, w: 120 });

    const asPhotographed = await run('keep');
    expect([asPhotographed.width, asPhotographed.height, asPhotographed.composition.aspect]).toEqual([
      W,
      H,
      'keep',
    ]);
    expect((await boxOfMatte(asPhotographed.matte)).box).toMatchObject({ x: 0, y: 90, w: 120, h: 50 });
  });
});

describe('the main car among equals', () => {
  it('keeps the more central of two equal cars and says so', async () => {
    const left: Box = { x: 10, y: 60, w: 140, h: 70 };
    const right: Box = { x: 160, y: 60, w: 140, h: 70 };
    // The right one is nearer the centre (160 + 70 = 230 vs 80: 70 px from 160 vs 80 px).
    expect(mainCarChoice([left, right], { width: W, height: H })).toEqual({ box: right, ambiguous: true });
    expect(mainCarChoice([left, { ...right, w: 60, h: 30 }], { width: W, height: H }).ambiguous).toBe(false);
  });
});

describe('framing math', () => {
  const stats = (box: Box) => {
    const alpha = new Uint8Array(W * H);
    for (let y = box.y; y < box.y + box.h; y++) alpha.fill(255, y * W + box.x, y * W + box.x + box.w);
    const matte = { width: W, height: H, alpha };
    return { matte, stats: matteStats(matte) };
  };

  it('caps the enlargement of a tiny car and the height of a tall one', () => {
    const tiny = stats({ x: 10, y: 10, w: 20, h: 10 }).stats;
    expect(centerPlacement(tiny)!.scale).toBe(CENTER_FRAMING.maxUpscale);
    const tall = stats({ x: 100, y: 10, w: 100, h: 180 }).stats;
    const placed = placeBox(tall.box!, centerPlacement(tall)!);
    expect(placed.h / H).toBeCloseTo(CENTER_FRAMING.maxHeightShare, 5);
    expect(placed.x + placed.w / 2).toBeCloseTo(W / 2, 5);
  });

  it('gives a canvas of the photo’s pixel count, at most, in the exact shape asked', () => {
    expect(canvasSize({ width: 4000, height: 3000 }, [4, 3])).toEqual({ width: 4000, height: 3000 });
    expect(canvasSize({ width: 3000, height: 4000 }, [4, 3])).toEqual({ width: 4000, height: 3000 });
    expect(canvasSize({ width: 380, height: 250 }, [16, 9])).toEqual({ width: 400, height: 225 });
    expect(canvasSize({ width: 380, height: 250 }, [1, 1])).toEqual({ width: 308, height: 308 });
    expect(canvasSize({ width: 380, height: 250 }, null)).toEqual({ width: 380, height: 250 });
  });

  it('moves a cut car onto another canvas with its cut sides on the same edges, and leaves it on its own', () => {
    const cut = stats({ x: 0, y: 60, w: 150, h: 140 }).stats;
    const asIs = keptPlacement(cut, ['left', 'bottom'], { width: W, height: H })!;
    expect(placeBox(cut.box!, asIs)).toEqual(cut.box);
    expect(asIs.scale).toBe(1);
    const portrait = { width: 180, height: 120 };
    const placed = placeBox(cut.box!, keptPlacement(cut, ['left', 'bottom'], portrait)!);
    expect(placed.x).toBeCloseTo(0, 5);
    expect(placed.y + placed.h).toBeCloseTo(portrait.height, 5);
    expect(placed.h).toBeLessThanOrEqual(portrait.height);
  });

  it('counts an edge only where a real run of the car meets it', () => {
    const whole = stats({ x: 1, y: 50, w: 200, h: 100 });
    expect(edgesCuttingCar(whole.matte, whole.stats)).toEqual([]);
    const corner = stats({ x: 200, y: 120, w: 120, h: 80 });
    expect(edgesCuttingCar(corner.matte, corner.stats)).toEqual(['right', 'bottom']);
  });
});
