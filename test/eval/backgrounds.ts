/**
 * The background part of `npm run eval`: proxies a person would otherwise judge by eye, per source, for
 * the segmenter's matte as it comes ("before") and after `isolateMainCar` ("after"), from one ISNet run per
 * photo. No segmentation ground truth exists in ../shared/eval, so each figure is a proxy:
 * - outside: share of the matte's foreground lying outside the main car's box grown by 10% on each side
 *   (a neighbouring car, a sign, a ghost beside the roof). NanoDet gives the box for the fix and for this
 *   measure alike: a car NanoDet misses is invisible to both.
 * - islands: foreground components beyond the largest, each of at least 0.1% of the frame.
 * - wheels: foreground coverage of the two lower corners of the main car's box (its lowest 15%, outer
 *   20% each side), the smaller of the two; tyres sit there in every view. A fix that ate wheels shows.
 * Photos are decoded and scaled to at most 1024 px on the longer side (ISNet's input is 1024 px anyway;
 * the full-size upscale and cleanup cost seconds on 12 MP photos); a fixed, evenly spread sample per source.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { readPhotos } from '#tools/analyze-samples.ts';
import { carDetector } from '#vision/car-detector.ts';
import { type DecodedImage, decodeSource } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import { expandBox } from '#vision/math/main-subject.ts';
import type { Matte } from '#vision/math/matte.ts';
import { foregroundComponents, regionCoverage, shareOutside } from '#vision/math/matte-regions.ts';
import type { ModelCache } from '#vision/models.ts';
import { isolateMainCar } from '#vision/operations/main-car.ts';
import { isnetSegmenter } from '#vision/segmenter.ts';
import { wilson } from './analysis.ts';

/** Longer side the eval photos are scaled to before segmenting. */
const EVAL_SIDE = 1024;
/** Photos per source, evenly spread through each source's sorted list. */
const SAMPLE = { views: 16, interiors: 6, eu: 10, us: 10, br: 10 } as const;
export type Source = keyof typeof SAMPLE;

/** A photo's matte is clean when under this share of its foreground is outside the grown car box. */
const CLEAN_OUTSIDE = 0.02;
/** The smaller lower-corner coverage at or above which the wheels count as kept. */
const WHEELS_KEPT = 0.25;

interface MatteFigures {
  readonly outside: number;
  readonly islands: number;
  readonly wheels: number;
  readonly coverage: number;
}

export interface PhotoResult {
  readonly file: string;
  readonly source: Source;
  /** Null when NanoDet found no vehicle: the matte is left as is and the car-box figures do not apply. */
  readonly box: Box | null;
  readonly before: MatteFigures;
  readonly after: MatteFigures;
}

function figuresOf(matte: Matte, box: Box | null): MatteFigures {
  const components = foregroundComponents(matte, Math.ceil(0.001 * matte.width * matte.height));
  let fg = 0;
  for (const a of matte.alpha) if (a >= 128) fg++;
  const coverage = fg / matte.alpha.length;
  if (!box)
    return { outside: Number.NaN, islands: Math.max(0, components.length - 1), wheels: Number.NaN, coverage };
  const corner = (fx: number) =>
    regionCoverage(matte, {
      x: box.x + fx * box.w,
      y: box.y + 0.85 * box.h,
      w: 0.2 * box.w,
      h: 0.15 * box.h,
    });
  return {
    outside: shareOutside(matte, expandBox(box, 0.1, matte)),
    islands: Math.max(0, components.length - 1),
    wheels: Math.min(corner(0), corner(0.8)),
    coverage,
  };
}

/** Evenly spread: the same photos on every run and every machine. */
export function spread<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]!);
}

async function samplePhotos(evalDir: string): Promise<{ file: string; source: Source }[]> {
  const photos = await readPhotos(evalDir);
  const listing = photos.filter((p) => p.source === 'listing');
  const files = (filter: (f: string) => boolean) =>
    [...new Set([...photos.map((p) => p.file)])].filter(filter).sort();
  const plates = (region: string) => files((f) => f.startsWith(`plates/${region}/`));
  const out: { file: string; source: Source }[] = [];
  const add = (source: Source, list: string[]) => {
    for (const file of spread(list, SAMPLE[source])) out.push({ file, source });
  };
  add(
    'views',
    listing
      .filter((p) => p.photoType === 'exterior')
      .map((p) => p.file)
      .sort(),
  );
  add(
    'interiors',
    listing
      .filter((p) => p.photoType === 'interior')
      .map((p) => p.file)
      .sort(),
  );
  add('eu', plates('eu'));
  add('us', plates('us'));
  add('br', plates('br'));
  return out;
}

/** Decoded as the service decodes, then scaled down to EVAL_SIDE at most. */
export async function evalImage(evalDir: string, file: string): Promise<DecodedImage> {
  const decoded = await decodeSource(await readFile(path.join(evalDir, file)));
  const scale = Math.min(1, EVAL_SIDE / Math.max(decoded.width, decoded.height));
  if (scale === 1) return decoded;
  const { data, info } = await sharp(decoded.pixels, {
    raw: { width: decoded.width, height: decoded.height, channels: decoded.channels },
  })
    .resize(Math.round(decoded.width * scale), Math.round(decoded.height * scale))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    ...decoded,
    width: info.width,
    height: info.height,
    channels: info.channels as 3 | 4,
    pixels: data,
  };
}

async function measureBackgrounds(evalDir: string, models: ModelCache): Promise<PhotoResult[]> {
  const [segmenter, cars] = await Promise.all([isnetSegmenter(models), carDetector(models)]);
  const results: PhotoResult[] = [];
  const photos = await samplePhotos(evalDir);
  for (const [i, { file, source }] of photos.entries()) {
    if (i % 10 === 0) console.log(`  backgrounds: ${i}/${photos.length}`);
    const image = await evalImage(evalDir, file);
    const matte = await segmenter.segment(image);
    const raw: Matte = { ...matte, alpha: Uint8Array.from(matte.alpha) };
    const main = await isolateMainCar(cars, image, matte);
    results.push({
      file,
      source,
      box: main.box,
      before: figuresOf(raw, main.box),
      after: figuresOf(matte, main.box),
    });
  }
  return results;
}

const quantile = (values: number[], q: number) => {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const rate = (k: number, n: number) => {
  const [lo, hi] = wilson(k, n);
  return `${n ? (k / n).toFixed(2) : '-'} (${lo.toFixed(2)}-${hi.toFixed(2)})`;
};

/** One row per source and stage: the proxies as rates with 95% Wilson intervals and as quantiles. */
function backgroundTable(results: readonly PhotoResult[]): string[][] {
  const header = [
    'source',
    'stage',
    'photos',
    'with car',
    'clean (outside < 2%)',
    'outside p50/p90',
    'no extra island',
    'islands p90',
    `wheels kept (>= ${WHEELS_KEPT})`,
  ];
  const rows: string[][] = [header];
  const sources = [...new Set(results.map((r) => r.source)), 'all' as const];
  for (const source of sources) {
    const of = results.filter((r) => source === 'all' || r.source === source);
    const withCar = of.filter((r) => r.box);
    for (const stage of ['before', 'after'] as const) {
      const f = (r: PhotoResult) => r[stage];
      rows.push([
        source,
        stage,
        String(of.length),
        String(withCar.length),
        rate(withCar.filter((r) => f(r).outside < CLEAN_OUTSIDE).length, withCar.length),
        `${pct(
          quantile(
            withCar.map((r) => f(r).outside),
            0.5,
          ),
        )} / ${pct(
          quantile(
            withCar.map((r) => f(r).outside),
            0.9,
          ),
        )}`,
        rate(of.filter((r) => f(r).islands === 0).length, of.length),
        String(
          quantile(
            of.map((r) => f(r).islands),
            0.9,
          ),
        ),
        rate(withCar.filter((r) => f(r).wheels >= WHEELS_KEPT).length, withCar.length),
      ]);
    }
  }
  return rows;
}

const pct = (v: number) => (Number.isNaN(v) ? '-' : `${(v * 100).toFixed(1)}%`);

function formatTable(rows: readonly string[][], markdown = false): string {
  if (markdown) {
    const line = (r: readonly string[]) => `| ${r.join(' | ')} |`;
    return [line(rows[0]!), line(rows[0]!.map(() => '---')), ...rows.slice(1).map(line)].join('\n');
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) =>
    r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export async function evalBackgrounds(evalDir: string, models: ModelCache): Promise<PhotoResult[]> {
  const started = performance.now();
  const results = await measureBackgrounds(evalDir, models);
  console.log(
    `\nBackgrounds: ${results.length} photos at <= ${EVAL_SIDE} px in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      'before = ISNet matte as segmented, after = isolateMainCar; rates with 95% Wilson intervals',
  );
  console.log(formatTable(backgroundTable(results)));
  const worst = [...results]
    .filter((r) => r.box)
    .sort((a, b) => b.before.outside - a.before.outside)
    .slice(0, 5)
    .map((r) => `${r.file} ${pct(r.before.outside)} -> ${pct(r.after.outside)}`);
  console.log(`  most foreground outside the car before: ${worst.join('; ')}`);
  return results;
}
