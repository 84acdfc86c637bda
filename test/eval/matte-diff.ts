/**
 * Which judged studio mattes a change to the main-car step moves, and how, before anyone re-judges them:
 * the step (`isolateMainCar`) run on the model mattes and NanoDet boxes the studio eval keeps in
 * .cache/eval-studio, for every photo of test/eval/studio-verdicts.csv, against a baseline saved before the
 * change. Only the rows whose matte moves may be re-judged (issue 32), so the list of changed photos is
 * what to look at; at the model's size (ISNet's 1024 x 1024) a run of the 100 takes a minute, where the
 * studio eval's full results take fifteen.
 * 1. `node --import tsx test/eval/matte-diff.ts save` on the code before the change: one PNG per photo in
 *    .cache/matte-diff.
 * 2. the same without `save` after it: a line per photo whose matte moved (the share of the model matte's
 *    pixels that crossed alpha 128), and eval-out/matte-diff/<name>.png to look at each: the photo with
 *    NanoDet's vehicles (green: the main car), ISNet's matte, the cut-out before and after.
 * PHOTO_JOBS_STUDIO_ONLY=a,b restricts it to photos whose file name holds one of these.
 * NanoDet asked for anything but the whole photo at the eval's threshold (a region, a lower score) runs
 * live: the cache holds that one call only.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { carDetector, type ObjectDetector } from '#vision/car-detector.ts';
import { type DecodedImage, decodeSource } from '#vision/image-io.ts';
import { OBJECT_SCORE_THRESHOLD } from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import { FOREGROUND, type Matte } from '#vision/math/matte.ts';
import { modelCache } from '#vision/models.ts';
import { isolateMainCar } from '#vision/operations/main-car.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const studioCache = path.join(repoRoot, '.cache', 'eval-studio');
const baselineDir = path.join(repoRoot, '.cache', 'matte-diff');
const outDir = path.join(repoRoot, 'eval-out', 'matte-diff');

const grey = (alpha: Uint8Array, width: number, height: number) =>
  sharp(Buffer.from(alpha), { raw: { width, height, channels: 1 } });

async function readMatte(file: string): Promise<Matte> {
  const m = await sharp(file).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: m.info.width, height: m.info.height, alpha: new Uint8Array(m.data) };
}

/** Share of the pixels on one side of FOREGROUND in `a` and the other in `b`. */
function movedShare(a: Matte, b: Matte): number {
  let moved = 0;
  for (let i = 0; i < a.alpha.length; i++)
    if (a.alpha[i]! >= FOREGROUND !== b.alpha[i]! >= FOREGROUND) moved++;
  return moved / a.alpha.length;
}

/** The photo, its vehicles, ISNet's matte and the two cut-outs over blue, two by two. */
async function panels(
  bytes: Buffer,
  image: DecodedImage,
  raw: Matte,
  before: Matte,
  after: Matte,
  car: { box: Box | null; vehicles: readonly Box[] },
): Promise<Buffer> {
  const { width, height } = image;
  const atPhoto = (m: Matte) =>
    grey(m.alpha, m.width, m.height)
      .resize(width, height, { fit: 'fill' })
      .extractChannel(0)
      .raw()
      .toBuffer();
  const rgb = await sharp(bytes).removeAlpha().resize(width, height, { fit: 'fill' }).raw().toBuffer();
  const cut = async (m: Matte) => {
    const a = await atPhoto(m);
    const px = Buffer.alloc(width * height * 3);
    const blue = [60, 60, 255];
    for (let i = 0; i < width * height; i++)
      for (let c = 0; c < 3; c++)
        px[i * 3 + c] = Math.round((rgb[i * 3 + c]! * a[i]! + blue[c]! * (255 - a[i]!)) / 255);
    return sharp(px, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer();
  };
  const rects = car.vehicles.map(
    (b) =>
      `<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" fill="none" stroke="${b === car.box ? 'lime' : 'red'}" stroke-width="2"/>`,
  );
  const svg = `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${rects.join('')}</svg>`;
  const tiles = [
    await sharp(rgb, { raw: { width, height, channels: 3 } })
      .composite([{ input: Buffer.from(svg) }])
      .png()
      .toBuffer(),
    await sharp(await atPhoto(raw), { raw: { width, height, channels: 1 } })
      .png()
      .toBuffer(),
    await cut(before),
    await cut(after),
  ];
  return sharp({ create: { width: 2 * width + 4, height: 2 * height + 4, channels: 3, background: '#fff' } })
    .composite(tiles.map((t, i) => ({ input: t, left: (i % 2) * (width + 4), top: (i >> 1) * (height + 4) })))
    .png()
    .toBuffer();
}

async function main(save: boolean): Promise<void> {
  const csv = await readFile(path.join(repoRoot, 'test', 'eval', 'studio-verdicts.csv'), 'utf8');
  const only = process.env.PHOTO_JOBS_STUDIO_ONLY?.split(',').filter(Boolean) ?? [];
  const files = csv
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0]!)
    .filter((f) => only.length === 0 || only.some((part) => f.includes(part)));
  await mkdir(save ? baselineDir : outDir, { recursive: true });
  const live = await carDetector(modelCache({}));
  let changed = 0;
  for (const file of files) {
    const name = path.basename(file, path.extname(file)).replace(/[^\w-]+/g, '_');
    const cachedBoxes = path.join(studioCache, `${name}.json`);
    if (!existsSync(cachedBoxes)) {
      console.log(`  not in .cache/eval-studio (run the studio eval once): ${file}`);
      continue;
    }
    const bytes = await readFile(path.join(evalDir, file));
    const image = await decodeSource(bytes);
    const raw = await readMatte(path.join(studioCache, `${name}.png`));
    const found = JSON.parse(await readFile(cachedBoxes, 'utf8'));
    const cars: ObjectDetector = {
      modelVersion: live.modelVersion,
      detect: async (img, options) =>
        !options?.region && options?.scoreThreshold === OBJECT_SCORE_THRESHOLD
          ? found
          : live.detect(img, options),
    };
    const after = { ...raw, alpha: Uint8Array.from(raw.alpha) };
    const car = await isolateMainCar(cars, image, after);
    const baseline = path.join(baselineDir, `${name}.png`);
    if (save) {
      await grey(after.alpha, after.width, after.height).png().toFile(baseline);
      continue;
    }
    if (!existsSync(baseline)) {
      console.log(`  no baseline (run with save first): ${file}`);
      continue;
    }
    const before = await readMatte(baseline);
    const moved = movedShare(before, after);
    if (moved === 0) continue;
    changed++;
    console.log(`  ${moved.toFixed(4)} moved: ${file}`);
    await sharp(await panels(bytes, image, raw, before, after, car)).toFile(path.join(outDir, `${name}.png`));
  }
  console.log(
    save
      ? `baseline of ${files.length} mattes in ${path.relative(repoRoot, baselineDir)}`
      : `${changed} of ${files.length} judged mattes moved; panels in ${path.relative(repoRoot, outDir)}`,
  );
}

await main(process.argv[2] === 'save');
