/**
 * Studio results on every exterior listing photo of ../shared/eval (photos.csv, `views/`), as a dealer would
 * look at them, and the contact sheet to look with:
 * - mirrors lost (a proxy): the upper outer corners of the main car's box (grown by 10% outwards, 20-55% of
 *   its height from the top, the outer 25% of its width each side), where side mirrors stand in every view
 *   but straight-on rear and side ones. A corner counts as lost when ISNet's own matte there has at least
 *   0.2% of the box's area and the service's final matte keeps under half of it: what the main-car step,
 *   the feather or the refinement took away. Per photo: corners lost (0, 1 or 2).
 * - framing: with `framing: center`, the distance of the car's box centre from the frame's centre, as a share
 *   of the frame's width, on photos where no edge cuts the car (the others keep their framing).
 * - the contact sheet: eval-out/studio-sheet.html, every photo's `studio_background` result with its matte's
 *   outline drawn in magenta, so mirrors, windows and framing can be checked at a glance.
 * ISNet's and NanoDet's outputs are kept in .cache/eval-studio so that a second run costs no model run.
 * Run alone: `node --import tsx test/eval/studio.ts`; part of `npm run eval` (PHOTO_JOBS_EVAL=studio).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { readPhotos } from '#tools/analyze-samples.ts';
import type { ObjectDetector } from '#vision/car-detector.ts';
import { carDetector } from '#vision/car-detector.ts';
import { decodeSource, openSource } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { FOREGROUND, type Matte, matteStats } from '#vision/math/matte.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import { replaceBackground } from '#vision/operations/background.ts';
import { boxInPhoto, mainCarCutout } from '#vision/operations/main-car.ts';
import { plateDetector, textReader } from '#vision/operations/plate.ts';
import { isnetSegmenter, type Segmenter } from '#vision/segmenter.ts';
import { spread } from './backgrounds.ts';
import { type MatteProxies, matteProxies, OUTSIDE_MARGIN } from './matte-proxies.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const THUMB_WIDTH = 220;

/** Corner regions where side mirrors stand, relative to the car box. */
function mirrorCorners(box: Box): [Box, Box] {
  const w = 0.25 * box.w + 0.1 * box.w;
  const y = box.y + 0.2 * box.h;
  const h = 0.35 * box.h;
  return [
    { x: box.x - 0.1 * box.w, y, w, h },
    { x: box.x + box.w - 0.25 * box.w, y, w, h },
  ];
}

function areaIn(matte: Matte, region: Box): number {
  const x0 = Math.max(0, Math.floor(region.x));
  const y0 = Math.max(0, Math.floor(region.y));
  const x1 = Math.min(matte.width, Math.ceil(region.x + region.w));
  const y1 = Math.min(matte.height, Math.ceil(region.y + region.h));
  let n = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) if (matte.alpha[y * matte.width + x]! >= FOREGROUND) n++;
  return n;
}

/** Corners (0..2) where the final matte keeps under half of what ISNet found there. */
function mirrorsLost(raw: Matte, final: Matte, box: Box): number {
  const min = 0.002 * box.w * box.h;
  return mirrorCorners(box).filter((corner) => {
    const before = areaIn(raw, corner);
    return before >= min && areaIn(final, corner) < 0.5 * before;
  }).length;
}

/** A segmenter and a car detector that answer from files once the real ones have run on a photo. */
function cached(dir: string, name: string, segmenter: Segmenter, cars: ObjectDetector) {
  const matteFile = path.join(dir, `${name}.png`);
  const carsFile = path.join(dir, `${name}.json`);
  const seg: Segmenter = {
    ...segmenter,
    async modelMatte(image) {
      if (existsSync(matteFile)) {
        const m = await sharp(matteFile).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
        return { width: m.info.width, height: m.info.height, alpha: new Uint8Array(m.data) };
      }
      const matte = await segmenter.modelMatte(image);
      await sharp(matte.alpha, { raw: { width: matte.width, height: matte.height, channels: 1 } })
        .png()
        .toFile(matteFile);
      return { ...matte, alpha: Uint8Array.from(matte.alpha) };
    },
  };
  const det: ObjectDetector = {
    modelVersion: cars.modelVersion,
    async detect(image, options) {
      if (existsSync(carsFile)) return JSON.parse(await readFile(carsFile, 'utf8'));
      const found = await cars.detect(image, options);
      await writeFile(carsFile, JSON.stringify(found));
      return found;
    },
  };
  return { segmenter: seg, cars: det };
}

/** The photos of the judged set (studio-verdicts.csv, first column). */
async function judgedFiles(): Promise<Set<string>> {
  const csv = await readFile(path.join(repoRoot, 'test', 'eval', 'studio-verdicts.csv'), 'utf8');
  return new Set(
    csv
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]!),
  );
}

export interface StudioFigures {
  readonly photos: number;
  readonly withCar: number;
  readonly mirrorsLostBefore: number;
  readonly mirrorsLostAfter: number;
  readonly whole: number;
  readonly centredWithin3: number;
  readonly worstCentre: number;
  readonly cut: number;
  readonly failed: number;
  /** The cut-out proxies (matte-proxies.ts) of every photo with a car, by file. */
  readonly proxies: ReadonlyMap<string, MatteProxies>;
  readonly sheet: string;
}

/** A proxy past these marks flags its photo on the contact sheet and in the counts. */
const PROXY_FLAGS: MatteProxies = { outside: 0.01, holes: 0.3, enclosed: 0.002, detached: 0.002 };

export async function evalStudio(
  evalDir: string,
  outDir: string,
  models: ModelCache,
): Promise<StudioFigures> {
  const all = (await readPhotos(evalDir))
    .filter((p) => p.source === 'listing' && p.photoType === 'exterior')
    .map((p) => p.file)
    .sort();
  // PHOTO_JOBS_STUDIO_SAMPLE=n: an evenly spread sample of n photos, for a machine too busy for all of them.
  const sample = Number(process.env.PHOTO_JOBS_STUDIO_SAMPLE ?? 0);
  // PHOTO_JOBS_STUDIO_ONLY=a,b: only the photos whose file name holds one of these, to look at a few again.
  const only = process.env.PHOTO_JOBS_STUDIO_ONLY?.split(',').filter(Boolean) ?? [];
  // PHOTO_JOBS_STUDIO_JUDGED=1: only the photos judged by eye in studio-verdicts.csv.
  const judged = process.env.PHOTO_JOBS_STUDIO_JUDGED ? await judgedFiles() : null;
  const chosen = all.filter(
    (f) => (only.length === 0 || only.some((part) => f.includes(part))) && (!judged || judged.has(f)),
  );
  const photos = sample > 0 ? spread(chosen, sample) : chosen;
  const cacheDir = path.join(repoRoot, '.cache', 'eval-studio');
  const thumbDir = path.join(outDir, 'studio-sheet');
  await mkdir(cacheDir, { recursive: true });
  await rm(thumbDir, { recursive: true, force: true });
  await mkdir(thumbDir, { recursive: true });
  const [segmenter, cars, detector, text] = await Promise.all([
    isnetSegmenter(models),
    carDetector(models),
    plateDetector(models),
    textReader(models),
  ]);
  let withCar = 0;
  let lostBefore = 0;
  let lostAfter = 0;
  let whole = 0;
  let centred = 0;
  let worst = 0;
  let cut = 0;
  let failed = 0;
  const proxies = new Map<string, MatteProxies>();
  const cells: string[] = [];
  const photoIndex: number[] = [];
  for (const [i, file] of photos.entries()) {
    if (i % 25 === 0) console.log(`  studio: ${i}/${photos.length}`);
    const name = path.basename(file, path.extname(file)).replace(/[^\w-]+/g, '_');
    // PHOTO_JOBS_STUDIO_CACHED=1: only photos whose model outputs are kept already (a busy machine).
    if (process.env.PHOTO_JOBS_STUDIO_CACHED && !existsSync(path.join(cacheDir, `${name}.json`))) continue;
    const deps = cached(cacheDir, name, segmenter, cars);
    const bytes = await readFile(path.join(evalDir, file));
    const levels = await openSource(bytes);
    const image = await decodeSource(bytes);
    // ISNet's matte as it comes, the service's before this change (upscale and feather), and after it.
    const raw = await segmenter.toPhotoSize(
      await deps.segmenter.modelMatte(image),
      image.width,
      image.height,
    );
    const before = await mainCarCutout(deps, levels);
    const after = await mainCarCutout(deps, levels, Promise.resolve(image));
    // NanoDet's box is in the pixels of the models' copy; the mattes here are at the photo's size.
    const carBox = after.car?.box ? await boxInPhoto(after.car.box, levels) : null;
    if (carBox) {
      withCar++;
      const [b, a] = [mirrorsLost(raw, before.matte, carBox), mirrorsLost(raw, after.matte, carBox)];
      lostBefore += b;
      lostAfter += a;
      // PHOTO_JOBS_STUDIO_LOG=1: a line per photo, so that a run stopped part way still gives its figures.
      if (process.env.PHOTO_JOBS_STUDIO_LOG) console.log(`  mirrors lost ${b} before, ${a} after: ${file}`);
    } else if (process.env.PHOTO_JOBS_STUDIO_LOG) console.log(`  no car: ${file}`);
    let caption = escapeHtml(file.replace(/^views\//, ''));
    if (carBox) {
      const p = matteProxies(after.matte, carBox);
      proxies.set(file, p);
      const flags = (Object.keys(PROXY_FLAGS) as (keyof MatteProxies)[]).filter((k) => p[k] > PROXY_FLAGS[k]);
      caption += `<br>out ${p.outside.toFixed(3)} holes ${p.holes.toFixed(2)} encl ${p.enclosed.toFixed(3)} det ${p.detached.toFixed(3)}`;
      if (flags.length > 0) caption += ` <b>${flags.join(' ')}</b>`;
    }
    try {
      const out = await replaceBackground(
        { ...deps, detector, text },
        bytes,
        {
          background: 'studio',
          plateColor: '#141414',
          plateSmoothing: true,
          plateMaskOnly: false,
          framing: 'center',
        },
        null,
      );
      const matte = await sharp(out.matte).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
      const stats = matteStats({
        width: matte.info.width,
        height: matte.info.height,
        alpha: new Uint8Array(matte.data),
      });
      if (process.env.PHOTO_JOBS_STUDIO_LOG) console.log(`  plates filled ${out.plates.length}: ${file}`);
      if (out.composition.car_cut_by_edge.length > 0) cut++;
      else if (stats.box) {
        whole++;
        const off = Math.abs(stats.box.x + stats.box.w / 2 - out.width / 2) / out.width;
        worst = Math.max(worst, off);
        if (off <= 0.03) centred++;
      }
      caption += `<br>${out.composition.framing}${out.composition.car_cut_by_edge.length ? ` (cut ${out.composition.car_cut_by_edge.join('+')})` : ''}`;
      await writeFile(path.join(thumbDir, `${i}.jpg`), await outlined(out.image, matte.data, matte.info));
      // PHOTO_JOBS_STUDIO_FULL=1: each result at 1600 pixels wide too (studio-full/<name>.jpg), to judge a
      // plate fill or a thin ghost that a thumbnail hides.
      if (process.env.PHOTO_JOBS_STUDIO_FULL) {
        await mkdir(path.join(outDir, 'studio-full'), { recursive: true });
        await sharp(out.image)
          .resize({ width: 1600, withoutEnlargement: true })
          .jpeg({ quality: 90 })
          .toFile(path.join(outDir, 'studio-full', `${name}.jpg`));
      }
    } catch (error) {
      failed++;
      caption += `<br>${escapeHtml((error as Error).name)}`;
      await writeFile(
        path.join(thumbDir, `${i}.jpg`),
        await sharp(bytes).resize({ width: THUMB_WIDTH }).jpeg({ quality: 80 }).toBuffer(),
      );
    }
    photoIndex.push(i);
    cells.push(
      `<figure><img src="studio-sheet/${i}.jpg" width="${THUMB_WIDTH}" alt=""><figcaption>${caption}</figcaption></figure>`,
    );
  }
  // A 4 x 3 grid of the first thumbnails: the sample docs/quality.md describes (the photos themselves may
  // not be committed, so neither is this picture).
  const tiles = await Promise.all(
    cells.slice(0, 12).map((_, i) =>
      sharp(path.join(thumbDir, `${photoIndex[i]}.jpg`))
        .resize(THUMB_WIDTH, 150, { fit: 'contain', background: '#222222' })
        .toBuffer(),
    ),
  );
  await sharp({ create: { width: THUMB_WIDTH * 4, height: 150 * 3, channels: 3, background: '#222222' } })
    .composite(
      tiles.map((input, i) => ({ input, left: (i % 4) * THUMB_WIDTH, top: Math.floor(i / 4) * 150 })),
    )
    .png()
    .toFile(path.join(outDir, 'studio-sheet-sample.png'));
  const sheet = path.join(outDir, 'studio-sheet.html');
  await writeFile(
    sheet,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>studio_background contact sheet</title>
<style>body{font:12px sans-serif;background:#222;color:#eee}figure{display:inline-block;margin:3px;width:${THUMB_WIDTH}px;vertical-align:top}
figcaption{word-break:break-all}</style></head><body><h1>studio_background on every exterior listing photo</h1>
<p>framing center, preset studio; the magenta line is the matte's outline (alpha 128).</p>${cells.join('\n')}</body></html>\n`,
  );
  return {
    photos: cells.length,
    withCar,
    mirrorsLostBefore: lostBefore,
    mirrorsLostAfter: lostAfter,
    whole,
    centredWithin3: centred,
    worstCentre: worst,
    cut,
    failed,
    proxies,
    sheet,
  };
}

/** The result with the matte's outline (where it crosses 128) in magenta, as a thumbnail. */
async function outlined(
  result: Buffer,
  matte: Buffer,
  info: { width: number; height: number },
): Promise<Buffer> {
  const { data, info: ri } = await sharp(result).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info;
  if (ri.width !== w || ri.height !== h) throw new Error('matte and result differ in size');
  const on = (x: number, y: number) => matte[y * w + x]! >= FOREGROUND;
  const thick = Math.max(1, Math.round(w / THUMB_WIDTH));
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const here = on(x, y);
      let edge = false;
      for (let d = 1; d <= thick && !edge; d++) {
        if ((x + d < w && on(x + d, y) !== here) || (y + d < h && on(x, y + d) !== here)) edge = true;
      }
      if (edge) data.set([255, 0, 255], (y * w + x) * 3);
    }
  }
  return sharp(data, { raw: { width: w, height: h, channels: 3 } })
    .resize({ width: THUMB_WIDTH })
    .jpeg({ quality: 82 })
    .toBuffer();
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

export function studioReport(f: StudioFigures): string {
  return [
    `Studio on ${f.photos} exterior listing photos (${f.withCar} with a car found, ${f.failed} failed):`,
    `  mirrors lost per photo (proxy): ${(f.mirrorsLostBefore / f.withCar).toFixed(3)} before -> ${(f.mirrorsLostAfter / f.withCar).toFixed(3)} after refinement`,
    `  framing center: ${f.centredWithin3}/${f.whole} whole cars centred within 3% of the width (worst ${(100 * f.worstCentre).toFixed(2)}%); ${f.cut} cut by an edge kept their framing`,
    proxyReport(f.proxies),
  ].join('\n');
}

/** Mean of each proxy and the photos past its flag, with the proxies' definitions stated once here. */
function proxyReport(proxies: ReadonlyMap<string, MatteProxies>): string {
  const all = [...proxies.values()];
  const keys = Object.keys(PROXY_FLAGS) as (keyof MatteProxies)[];
  const lines = [
    `  cut-out proxies on ${all.length} photos with a car (outside: beyond the car box grown ${100 * OUTSIDE_MARGIN}%; holes: convex silhouette uncovered; enclosed: background inside the car; detached: not connected to it):`,
  ];
  for (const key of keys) {
    const mean = all.reduce((s, p) => s + p[key], 0) / Math.max(1, all.length);
    const flagged = all.filter((p) => p[key] > PROXY_FLAGS[key]).length;
    lines.push(
      `    ${key}: mean ${mean.toFixed(4)}, ${flagged}/${all.length} photos over ${PROXY_FLAGS[key]}`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
  const figures = await evalStudio(evalDir, path.join(repoRoot, 'eval-out'), modelCache({}));
  console.log(studioReport(figures));
  console.log(`contact sheet: ${path.relative(repoRoot, figures.sheet)}`);
}
