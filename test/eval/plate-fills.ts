/**
 * `PHOTO_JOBS_EVAL=plate-fills npm run eval`: every fill of the shipped finder, by what it lies on
 * (issue 34, item 5: non-plate fills <= 0.03 a photo on every source, timestamps, overlays, signs and
 * vehicle lettering counted; other cars' plates counted apart).
 * 1. Every photo of the plate sources (eu, us, br, ro, in) and the plate-less ones (interiors, side views;
 *    test/eval/plate-sources.ts lists them) through `find` with the shipped rule, as `plate` runs it; each
 *    fill's box is the box around what the service fills (`plateOutlines`). Kept a line a photo in
 *    eval-out/plate-fills.jsonl: a rerun reads it back (delete it after a change of the finder).
 * 2. Each fill is classed (`classifyFill`): on a labelled plate (it hides the label on its own, or lies
 *    mostly inside it); else on another car's real plate (test/eval/plates-other.csv); else non-plate,
 *    its cause read from test/eval/non-plate-fills.csv (looked at by eye, matched at IoU >= 0.5); a fill
 *    in neither file is listed as "not looked at" and counted as non-plate.
 * 3. How far the fills of each labelled plate reach beyond its labelled box, in plate heights: the
 *    largest outward step of the four sides, and whether every corner of the label is covered.
 * PLATE_FILLS_CROPS=dir writes a PNG of each fill off the labels with its context, outlined, to look at.
 * Fills per photo carry 95% Wilson intervals, each fill treated as a photo with one.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { openSource } from '#vision/image-io.ts';
import { type Box, boxIoU, overlapAcross, overlapDown, type Size } from '#vision/math/geometry.ts';
import type { ModelCache } from '#vision/models.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import { wilson } from './analysis.ts';
import {
  fillBoxOf,
  hidden,
  PLATE_SOURCES,
  PLATELESS_SOURCES,
  readJsonLines,
  sourcePhotos,
} from './plate-sources.ts';

/** The non-plate fills of the street sources must stay at or under this many a photo (issue 34). */
const NON_PLATE_TARGET = 0.03;

const CAUSES = [
  'timestamp/overlay',
  'sign',
  'vehicle lettering',
  'grille/bodywork',
  'wheel',
  'other',
] as const;
type Cause = (typeof CAUSES)[number];

/** One photo through the shipped finder. */
export interface PhotoFills {
  /** Relative to the eval folder, as the label files name it. */
  readonly file: string;
  readonly source: string;
  readonly size: Size;
  readonly labels: readonly Box[];
  readonly fills: readonly { readonly box: Box; readonly score: number; readonly text?: string }[];
  readonly seconds: number;
}

export interface NonPlateLabel {
  readonly file: string;
  readonly box: Box;
  readonly cause: Cause;
  readonly note: string;
}

export type FillClass =
  | { readonly kind: 'plate'; readonly label: number }
  | { readonly kind: 'other plate' }
  | { readonly kind: 'non-plate'; readonly cause: Cause; readonly note: string }
  | { readonly kind: 'not looked at' };

function insideShare(inner: Box, outer: Box): number {
  const w = overlapAcross(inner, outer);
  const h = overlapDown(inner, outer);
  return w > 0 && h > 0 && inner.w * inner.h > 0 ? (w * h) / (inner.w * inner.h) : 0;
}

/** A fill is on `plate` when it hides it on its own (`hidden`) or lies mostly inside it (a part of a plate). */
const onPlate = (fill: Box, plate: Box) => hidden([fill], plate) || insideShare(fill, plate) >= 0.5;

/**
 * What a fill lies on: a labelled plate of its photo; else another car's plate (`others`, also when only
 * IoU >= 0.3 with it: those boxes were drawn after the fact); else a fill looked at and labelled
 * non-plate (IoU >= 0.5 with it); else not looked at.
 */
export function classifyFill(
  fill: Box,
  labels: readonly Box[],
  others: readonly Box[],
  nonPlate: readonly Omit<NonPlateLabel, 'file'>[],
): FillClass {
  const label = labels.findIndex((l) => onPlate(fill, l));
  if (label >= 0) return { kind: 'plate', label };
  if (others.some((o) => onPlate(fill, o) || boxIoU(fill, o) >= 0.3)) return { kind: 'other plate' };
  const seen = nonPlate.find((n) => boxIoU(fill, n.box) >= 0.5);
  return seen ? { kind: 'non-plate', cause: seen.cause, note: seen.note } : { kind: 'not looked at' };
}

/**
 * How the fills on one plate sit on its labelled box, in plate heights (the label's height): `beyond`,
 * the largest step of a side of their union outward of the label's side; `inset`, the largest step of a
 * side inward (> 0: a corner of the label is left uncovered by the union's box).
 */
export function fillMargin(fills: readonly Box[], label: Box): { beyond: number; inset: number } {
  const x0 = Math.min(...fills.map((f) => f.x));
  const y0 = Math.min(...fills.map((f) => f.y));
  const x1 = Math.max(...fills.map((f) => f.x + f.w));
  const y1 = Math.max(...fills.map((f) => f.y + f.h));
  const steps = [label.x - x0, label.y - y0, x1 - (label.x + label.w), y1 - (label.y + label.h)];
  return {
    beyond: Math.max(0, ...steps) / label.h,
    inset: Math.max(0, ...steps.map((s) => -s)) / label.h,
  };
}

const toBox = (cells: readonly string[]): Box => {
  const [x, y, w, h] = cells.map(Number) as [number, number, number, number];
  return { x, y, w, h };
};

async function csvRows(file: string): Promise<string[][]> {
  if (!existsSync(file)) return [];
  return (await readFile(file, 'utf8'))
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .filter((l) => l.trim() !== '')
    .map((l) => l.split(','));
}

async function readNonPlateLabels(file: string): Promise<NonPlateLabel[]> {
  return (await csvRows(file)).map(([f, x, y, w, h, cause, ...note]) => {
    if (!(CAUSES as readonly string[]).includes(cause!)) throw new Error(`${file}: unknown cause ${cause}`);
    return { file: f!, box: toBox([x!, y!, w!, h!]), cause: cause as Cause, note: note.join(',') };
  });
}

/** Every photo of every source not yet in `out`, through `find`, appended a line a photo as it comes. */
async function collectFills(evalDir: string, models: ModelCache, out: string): Promise<void> {
  await mkdir(path.dirname(out), { recursive: true });
  const done = new Set((await readJsonLines<PhotoFills>(out)).map((p) => p.file));
  const detector = await plateDetector(models);
  for (const photo of await sourcePhotos(evalDir)) {
    const file = path.relative(evalDir, photo.file);
    if (done.has(file)) continue;
    const levels = await openSource(await readFile(photo.file));
    const start = performance.now();
    const plates = await detector.find(levels);
    const seconds = (performance.now() - start) / 1000;
    const record: PhotoFills = {
      file,
      source: photo.source,
      size: { width: levels.width, height: levels.height },
      labels: photo.labels,
      fills: plates.map((p) => ({
        box: fillBoxOf(p),
        score: p.score,
        ...(p.text ? { text: p.text.characters } : {}),
      })),
      seconds,
    };
    await appendFile(out, `${JSON.stringify(record)}\n`);
  }
}

export interface ClassedFill {
  readonly photo: PhotoFills;
  readonly box: Box;
  readonly classed: FillClass;
}

export function classifyAll(
  photos: readonly PhotoFills[],
  others: readonly { file: string; box: Box }[],
  nonPlate: readonly NonPlateLabel[],
): ClassedFill[] {
  return photos.flatMap((photo) =>
    photo.fills.map((f) => ({
      photo,
      box: f.box,
      classed: classifyFill(
        f.box,
        photo.labels,
        others.filter((o) => o.file === photo.file).map((o) => o.box),
        nonPlate.filter((n) => n.file === photo.file),
      ),
    })),
  );
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

const rate = (k: number, n: number) => {
  const [lo, hi] = wilson(Math.min(k, n), n);
  return `${(k / n).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] (${k}/${n})`;
};

const boxText = (b: Box) => `${Math.round(b.x)},${Math.round(b.y)},${Math.round(b.w)},${Math.round(b.h)}`;

/** The per-source table, the non-plate fills by cause, and the margins, as markdown. */
export function reportFills(photos: readonly PhotoFills[], fills: readonly ClassedFill[]): string {
  const lines = [
    "| source | photos | fills | on labelled plates | on other cars' plates per photo | non-plate fills per photo [95%] | of which not looked at | ≤ 0.03 |",
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const source of [...PLATE_SOURCES, ...PLATELESS_SOURCES]) {
    const n = photos.filter((p) => p.source === source).length;
    if (n === 0) continue;
    const here = fills.filter((f) => f.photo.source === source);
    const count = (kind: FillClass['kind']) => here.filter((f) => f.classed.kind === kind).length;
    const bad = count('non-plate') + count('not looked at');
    lines.push(
      `| ${source} | ${n} | ${here.length} | ${count('plate')} | ${(count('other plate') / n).toFixed(3)} (${count('other plate')}) | ${rate(bad, n)} | ${count('not looked at')} | ${bad / n <= NON_PLATE_TARGET ? 'met' : '**not met**'} |`,
    );
  }
  lines.push('', '| non-plate fills by cause | fills | where |', '|---|---|---|');
  for (const cause of [...CAUSES, 'not looked at'] as const) {
    const of = fills.filter((f) =>
      f.classed.kind === 'non-plate' ? f.classed.cause === cause : f.classed.kind === cause,
    );
    if (of.length === 0) continue;
    const where = of.map(
      (f) =>
        `${f.photo.source} ${path.basename(f.photo.file)}${f.classed.kind === 'non-plate' && f.classed.note ? ` (${f.classed.note})` : ` [${boxText(f.box)}]`}`,
    );
    lines.push(`| ${cause} | ${of.length} | ${where.join('; ')} |`);
  }
  const margins = marginsOf(photos, fills);
  const beyond = margins.map((m) => m.beyond).sort((a, b) => a - b);
  const inset = margins.map((m) => m.inset).sort((a, b) => a - b);
  lines.push(
    '',
    `Fills beyond their plate's labelled box (${margins.length} plates found), largest side, in plate heights: ` +
      `${spread(beyond)}. Label corners left uncovered (a side inside the label by > 0.1 plate height): ` +
      `${inset.filter((v) => v > 0.1).length} (inset p95 ${f2(quantile(inset, 0.95))}, max ${f2(inset.at(-1) ?? Number.NaN)}).`,
    '',
    'For docs/quality.md:',
    '',
    docsTable(photos, fills),
  );
  return lines.join('\n');
}

const f2 = (v: number) => v.toFixed(2);
const spread = (sorted: readonly number[]) =>
  `p50 ${f2(quantile(sorted, 0.5))}, p95 ${f2(quantile(sorted, 0.95))}, max ${f2(sorted.at(-1) ?? Number.NaN)}`;

/** The margins of every labelled plate the fills hide, with the photo's source. */
function marginsOf(photos: readonly PhotoFills[], fills: readonly ClassedFill[]) {
  return photos.flatMap((p) =>
    p.labels.flatMap((label, i) => {
      const on = fills
        .filter((f) => f.photo === p && f.classed.kind === 'plate' && f.classed.label === i)
        .map((f) => f.box);
      return on.length > 0 && hidden(on, label) ? [{ source: p.source, ...fillMargin(on, label) }] : [];
    }),
  );
}

/** The same figures, a column a source, with the causes counted in the non-plate cell. */
function docsTable(photos: readonly PhotoFills[], fills: readonly ClassedFill[]): string {
  const sources = [...PLATE_SOURCES, ...PLATELESS_SOURCES].filter((s) => photos.some((p) => p.source === s));
  const margins = marginsOf(photos, fills);
  const cells = sources.map((source) => {
    const n = photos.filter((p) => p.source === source).length;
    const here = fills.filter((f) => f.photo.source === source);
    const other = here.filter((f) => f.classed.kind === 'other plate').length;
    const causes = new Map<string, number>();
    for (const f of here) {
      const cause =
        f.classed.kind === 'non-plate'
          ? f.classed.cause
          : f.classed.kind === 'not looked at'
            ? 'not looked at'
            : '';
      if (cause) causes.set(cause, (causes.get(cause) ?? 0) + 1);
    }
    const bad = [...causes.values()].reduce((a, b) => a + b, 0);
    const [lo, hi] = wilson(Math.min(bad, n), n);
    const beyond = margins
      .filter((m) => m.source === source)
      .map((m) => m.beyond)
      .sort((a, b) => a - b);
    return {
      head: `${source} (${n})`,
      other: `${(other / n).toFixed(3)} (${other})`,
      bad: `${(bad / n).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}]${bad ? `: ${[...causes].map(([c, k]) => `${c} ${k}`).join(', ')}` : ''}`,
      beyond: beyond.length
        ? `${f2(quantile(beyond, 0.5))} / ${f2(quantile(beyond, 0.95))} / ${f2(beyond.at(-1)!)}`
        : '-',
    };
  });
  const row = (name: string, key: keyof (typeof cells)[number]) =>
    `| ${name} | ${cells.map((c) => c[key]).join(' | ')} |`;
  return [
    row('per photo (photos)', 'head'),
    `|---|${cells.map(() => '---|').join('')}`,
    row("fills on other cars' plates", 'other'),
    row('non-plate fills [95%] (≤ 0.03): causes', 'bad'),
    row('fill beyond its plate, plate heights p50 / p95 / max', 'beyond'),
  ].join('\n');
}

/** Each fill off the labels with its context (three fill sizes about it, at least 160 px), outlined in red. */
async function writeCrops(evalDir: string, fills: readonly ClassedFill[], dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [i, f] of fills.entries()) {
    if (f.classed.kind === 'plate') continue;
    const { width, height } = f.photo.size;
    const pad = Math.max(80, 1.5 * Math.max(f.box.w, f.box.h));
    const left = Math.max(0, Math.floor(f.box.x - pad));
    const top = Math.max(0, Math.floor(f.box.y - pad));
    const w = Math.min(width, Math.ceil(f.box.x + f.box.w + pad)) - left;
    const h = Math.min(height, Math.ceil(f.box.y + f.box.h + pad)) - top;
    const outline = Buffer.from(
      `<svg width="${w}" height="${h}"><rect x="${f.box.x - left}" y="${f.box.y - top}" width="${f.box.w}" height="${f.box.h}" fill="none" stroke="red" stroke-width="${Math.max(1, Math.round(w / 300))}"/></svg>`,
    );
    const name = `${f.photo.source}-${path.basename(f.photo.file).replace(/[^\w.-]/g, '_')}-${i}-${f.classed.kind.replace(/ /g, '_')}.png`;
    const crop = await sharp(path.join(evalDir, f.photo.file))
      .extract({ left, top, width: w, height: h })
      .composite([{ input: outline }])
      .png()
      .toBuffer();
    await sharp(crop)
      .resize({ width: Math.max(w, Math.min(600, 3 * w)) })
      .toFile(path.join(dir, name));
  }
}

export async function evalPlateFills(evalDir: string, models: ModelCache, outDir: string): Promise<void> {
  const out = path.join(outDir, 'plate-fills.jsonl');
  if (process.env.PLATE_FILLS_COLLECT !== 'no') await collectFills(evalDir, models, out);
  const photos = await readJsonLines<PhotoFills>(out);
  const others = (await csvRows(path.join(import.meta.dirname, 'plates-other.csv'))).map(([file, ...b]) => ({
    file: file!,
    box: toBox(b),
  }));
  const nonPlate = await readNonPlateLabels(path.join(import.meta.dirname, 'non-plate-fills.csv'));
  const fills = classifyAll(photos, others, nonPlate);
  const crops = process.env.PLATE_FILLS_CROPS;
  if (crops) await writeCrops(evalDir, fills, crops);
  console.log(`\n## Plates, every fill by what it lies on\n\n${reportFills(photos, fills)}`);
}
