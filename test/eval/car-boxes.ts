/**
 * NanoDet's main-car box against boxes drawn by hand, on two sources no rule of ours was chosen on: every
 * third turntable frame (extra/turntable.csv, the data set's own car boxes) and the DAVIS frames (the box
 * of each hand-drawn car mask). Per side, how far the main box (`mainCarChoice` over `distinctVehicles`, as
 * the service picks it) lies inside the true box, as a share of the true box's width or height: positive
 * = the box stops short of the car on that side. Quantiles per source.
 * Run alone: `node --import tsx test/eval/car-boxes.ts`; part of `npm run eval` (car-boxes).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { carDetector } from '#vision/car-detector.ts';
import { decodeSource } from '#vision/image-io.ts';
import { distinctVehicles, OBJECT_SCORE_THRESHOLD } from '#vision/math/features.ts';
import type { Box } from '#vision/math/geometry.ts';
import { mainCarChoice } from '#vision/math/main-subject.ts';
import { matteStats } from '#vision/math/matte.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SIDES = ['top', 'bottom', 'left', 'right'] as const;
type Side = (typeof SIDES)[number];

/** How far `found` lies inside `truth` on each side, in shares of the true box. */
function sideOffsets(found: Box, truth: Box): Record<Side, number> {
  return {
    top: (found.y - truth.y) / truth.h,
    bottom: (truth.y + truth.h - found.y - found.h) / truth.h,
    left: (found.x - truth.x) / truth.w,
    right: (truth.x + truth.w - found.x - found.w) / truth.w,
  };
}

/** The box of a hand-drawn mask (pixels >= 128, as `matteStats` bounds a matte). */
async function maskBox(file: string): Promise<Box> {
  const { data, info } = await sharp(file).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  const { box } = matteStats({ width: info.width, height: info.height, alpha: new Uint8Array(data) });
  if (!box) throw new Error(`${file} is an empty mask`);
  return box;
}

export async function evalCarBoxes(evalDir: string, models: ModelCache): Promise<string> {
  const dir = path.join(evalDir, 'extra');
  const cars = await carDetector(models);
  const csv = async (name: string) =>
    (await readFile(path.join(dir, name), 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
  const offsets: Record<string, Record<Side, number>[]> = { turntable: [], davis: [] };
  const measure = async (source: string, file: string, truth: Box) => {
    const image = await decodeSource(await readFile(path.join(dir, file)));
    const vehicles = distinctVehicles(
      await cars.detect(image, { scoreThreshold: OBJECT_SCORE_THRESHOLD }),
    ).map((d) => d.box);
    const { box } = mainCarChoice(vehicles, image);
    if (box) offsets[source]!.push(sideOffsets(box, truth));
  };
  for (const [i, r] of (await csv('turntable.csv')).entries())
    if (i % 3 === 0) await measure('turntable', r[0]!, { x: +r[5]!, y: +r[6]!, w: +r[7]!, h: +r[8]! });
  for (const r of await csv('masks-davis.csv'))
    await measure('davis', r[0]!, await maskBox(path.join(dir, r[1]!)));
  const lines = [
    'NanoDet main-car box inside the true box, per side (share of the true box; + = short of the car)',
    '| source | side | boxes | p5 | median | p95 |',
    '|---|---|---|---|---|---|',
  ];
  for (const [source, rows] of Object.entries(offsets)) {
    for (const side of SIDES) {
      const v = rows.map((o) => o[side]).sort((a, b) => a - b);
      const q = (p: number) => v[Math.min(v.length - 1, Math.floor(p * v.length))]!.toFixed(3);
      lines.push(`| ${source} | ${side} | ${v.length} | ${q(0.05)} | ${q(0.5)} | ${q(0.95)} |`);
    }
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  console.log(await evalCarBoxes(path.resolve(repoRoot, '..', 'shared', 'eval'), modelCache({})));
}
