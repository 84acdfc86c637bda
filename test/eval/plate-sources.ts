/**
 * The plate part of `npm run eval` judged where nothing was tuned: leave one source out.
 * Sources: the three regions of ../shared/eval/plates.csv (eu, us, br), ../shared/eval/extra/plates-ro
 * (Romanian dashcam frames, several plates a frame) and plates-in (Indian photos from the web and
 * phones); and, with no plate in sight, interiors and side views of ../shared/eval/photos.csv.
 * 1. Evidence: every photo through `PlateDetector.candidates` with `readText: 'all'` (the detector's
 *    pyramid and looks, the text read on every proposal, the text search always run), so that any rule
 *    of the grid decides exactly as the service would (`selectPlates`). Kept, one line a photo, in
 *    eval-out/plate-evidence.jsonl: a rerun reads it back (delete it after a change of the finder).
 * 2. For each plate source held out, the rule of the grid with the least cost on every other source
 *    (misses per plate plus `DAMAGE_COST` per fill on a plate-less photo); the figures of the held-out
 *    source come from that rule alone. The plate-less sources are held out the same way.
 * 3. A plate is found when a fill's box (the union of the detector's quad and the text line) has IoU
 *    >= 0.5 with its label, or covers at least 80% of it while at most 4 times its area, or the fills
 *    touching it do so together (`hidden`).
 * 4. Misses listed by a cause read from the label (scale, light, angle, format), see `missCause`.
 * Figures carry 95% Wilson intervals; fills per photo treat each fill as a photo with one.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { openSource } from '#vision/image-io.ts';
import {
  type Box,
  boundingBox,
  boxIoU,
  overlapAcross,
  overlapDown,
  type Size,
} from '#vision/math/geometry.ts';
import { type PlateTextOptions, plateText } from '#vision/math/ocr.ts';
import {
  PLATE_RULE,
  type PlateCandidate,
  type PlateRule,
  selectPlates,
} from '#vision/math/plate-evidence.ts';
import type { ModelCache } from '#vision/models.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import { type PlateDetection, plateOutlines, plateToFill } from '#vision/plate-detector.ts';
import { wilson } from './analysis.ts';

const DAMAGE_COST = 2;
/** A plate at least this share of its photo's width is a close-up (the misses' causes, the recall split). */
export const CLOSE_UP_SHARE = 0.2;

export const PLATE_SOURCES = ['eu', 'us', 'br', 'ro', 'in'] as const;
export const PLATELESS_SOURCES = ['interiors', 'side-views'] as const;

export interface SourcePhoto {
  readonly file: string;
  readonly source: string;
  readonly labels: readonly Box[];
}

interface PhotoEvidence extends SourcePhoto {
  readonly size: Size;
  readonly candidates: readonly PlateCandidate[];
  readonly seconds: number;
  /** Mean luma (0..255) inside each label, for the confusion list. */
  readonly labelLuma: readonly number[];
}

async function readCsv(file: string): Promise<string[][]> {
  const lines = (await readFile(file, 'utf8')).trim().split(/\r?\n/).slice(1);
  return lines.map((line) => line.split(','));
}

/** Every photo of every source, labels grouped by photo. */
export async function sourcePhotos(
  evalDir: string,
  perSource = Number(process.env.PLATE_EVAL_SAMPLE) || Number.POSITIVE_INFINITY,
): Promise<SourcePhoto[]> {
  const byFile = new Map<string, SourcePhoto & { labels: Box[] }>();
  const add = (file: string, source: string, box?: Box) => {
    let photo = byFile.get(file);
    if (!photo) {
      photo = { file, source, labels: [] };
      byFile.set(file, photo);
    }
    if (box) photo.labels.push(box);
  };
  const box = (cells: string[]) => {
    const [x, y, w, h] = cells.map(Number) as [number, number, number, number];
    return { x, y, w, h };
  };
  for (const [file, region, ...rest] of await readCsv(path.join(evalDir, 'plates.csv')))
    add(path.join(evalDir, file!), region!, box(rest.slice(0, 4)));
  for (const source of ['ro', 'in']) {
    const extra = path.join(evalDir, 'extra');
    const csv = path.join(extra, `plates-${source}.csv`);
    if (!existsSync(csv)) continue;
    for (const [file, ...rest] of await readCsv(csv)) add(path.join(extra, file!), source, box(rest));
  }
  const rows = await readCsv(path.join(evalDir, 'photos.csv'));
  // Every other interior: 100 of 200 keep the run short; side views all.
  rows
    .filter(([, type]) => type === 'interior')
    .forEach(([file], i) => {
      if (i % 2 === 0) add(path.join(evalDir, file!), 'interiors');
    });
  for (const [file, , view] of rows)
    if (view === 'side_left' || view === 'side_right') add(path.join(evalDir, file!), 'side-views');
  return sample([...byFile.values()], perSource);
}

/**
 * At most `perSource` photos of each source, evenly spaced through its list (PLATE_EVAL_SAMPLE: a run
 * on a loaded 2-core machine; the full run is the default).
 */
function sample(photos: readonly SourcePhoto[], perSource: number): SourcePhoto[] {
  const bySource = new Map<string, SourcePhoto[]>();
  for (const p of photos) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
  const lists = [...bySource.values()].map((list) => {
    if (list.length <= perSource) return list;
    const step = list.length / perSource;
    return Array.from({ length: perSource }, (_, i) => list[Math.floor(i * step)]!);
  });
  // Round-robin over the sources: a run stopped early still has every source.
  const longest = Math.max(0, ...lists.map((l) => l.length));
  return Array.from({ length: longest }, (_, i) =>
    lists.flatMap((l) => (i < l.length ? [l[i]!] : [])),
  ).flat();
}

/**
 * The evidence of every photo not yet in `out` (this worker's share: every `shards`-th photo from
 * `shard`), appended as it comes.
 */
async function collectEvidence(
  evalDir: string,
  models: ModelCache,
  out: string,
  { shard = 0, shards = 1, doneIn = [] as readonly string[] } = {},
): Promise<void> {
  await mkdir(path.dirname(out), { recursive: true });
  const done = new Set<string>();
  for (const file of [out, ...doneIn])
    for (const e of await readJsonLines<PhotoEvidence>(file)) done.add(e.file);
  const detector = await plateDetector(models);
  const photos = (await sourcePhotos(evalDir)).filter((_, i) => i % shards === shard);
  for (const photo of photos) {
    if (done.has(photo.file)) continue;
    const bytes = await readFile(photo.file);
    const levels = await openSource(bytes);
    const start = performance.now();
    const candidates = await detector.candidates(levels, { readText: 'all' });
    const seconds = (performance.now() - start) / 1000;
    const labelLuma = await Promise.all(photo.labels.map((l) => lumaIn(bytes, l, levels)));
    const evidence: PhotoEvidence = {
      ...photo,
      size: { width: levels.width, height: levels.height },
      candidates,
      seconds,
      labelLuma,
    };
    await appendFile(out, `${JSON.stringify(evidence)}\n`);
  }
}

async function lumaIn(bytes: Buffer, box: Box, size: Size): Promise<number> {
  const left = Math.max(0, Math.floor(box.x));
  const top = Math.max(0, Math.floor(box.y));
  const width = Math.max(1, Math.min(size.width - left, Math.ceil(box.w)));
  const height = Math.max(1, Math.min(size.height - top, Math.ceil(box.h)));
  const { channels } = await sharp(bytes).extract({ left, top, width, height }).greyscale().stats();
  return channels[0]?.mean ?? 0;
}

/** The records an eval appended a line each (JSON Lines); none when the file is not there yet. */
export async function readJsonLines<T>(file: string): Promise<T[]> {
  if (!existsSync(file)) return [];
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

/** The box around what the service fills for this plate (`plateOutlines`, as every operation fills). */
export function fillBoxOf(plate: PlateDetection): Box {
  return boundingBox(plateOutlines([plate]).flat());
}

const fillBox = (c: PlateCandidate): Box => fillBoxOf(plateToFill(c));

function covers(fill: Box, label: Box): boolean {
  if (boxIoU(fill, label) >= 0.5) return true;
  const inter = intersection(fill, label);
  const area = inter ? inter.w * inter.h : 0;
  return area >= 0.8 * label.w * label.h && fill.w * fill.h <= 4 * label.w * label.h;
}

function intersection(a: Box, b: Box): Box | null {
  const w = overlapAcross(a, b);
  const h = overlapDown(a, b);
  return w > 0 && h > 0 ? { x: Math.max(a.x, b.x), y: Math.max(a.y, b.y), w, h } : null;
}

/**
 * Whether the fills hide the plate: one of them `covers` it, or those touching it cover 80% of it
 * together (counted on a pixel grid) while at most 4 times its area (two halves of one plate's row).
 */
export function hidden(fills: readonly Box[], label: Box): boolean {
  if (fills.some((f) => covers(f, label))) return true;
  const touching = fills.filter((f) => intersection(f, label));
  if (touching.length < 2 || touching.reduce((a, f) => a + f.w * f.h, 0) > 4 * label.w * label.h)
    return false;
  const x0 = Math.floor(label.x);
  const y0 = Math.floor(label.y);
  const w = Math.ceil(label.x + label.w) - x0;
  const h = Math.ceil(label.y + label.h) - y0;
  let inside = 0;
  for (let y = y0 + 0.5; y < y0 + h; y++)
    for (let x = x0 + 0.5; x < x0 + w; x++)
      if (touching.some((f) => x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h)) inside++;
  return inside >= 0.8 * w * h;
}

/** The fills that hide no label they touch: on something else, or an unlabelled plate. */
export function offLabels(fills: readonly Box[], labels: readonly Box[]): Box[] {
  return fills.filter((f) => !labels.some((l) => intersection(f, l) && hidden(fills, l)));
}

interface Tally {
  photos: number;
  plates: number;
  found: number;
  closePlates: number;
  closeFound: number;
  farPlates: number;
  farFound: number;
  /** Fills on a plate-less photo, or on a plate photo matching no label (may be an unlabelled plate). */
  fills: number;
  photosWithFill: number;
  misses: { file: string; label: Box; cause: string }[];
}

const emptyTally = (): Tally => ({
  photos: 0,
  plates: 0,
  found: 0,
  closePlates: 0,
  closeFound: 0,
  farPlates: 0,
  farFound: 0,
  fills: 0,
  photosWithFill: 0,
  misses: [],
});

/**
 * Why a plate was missed: what the finder had on it (nothing, a fill too small or misplaced, or a
 * candidate neither signal confirmed), then a condition read from the label (scale, light, angle or
 * format), the first that holds.
 */
function missCause(
  label: Box,
  photo: Size,
  luma: number,
  candidates: readonly PlateCandidate[],
  fills: readonly Box[],
): string {
  const share = label.w / photo.width;
  const condition =
    share < 0.08
      ? 'far (< 8% of the width)'
      : share >= CLOSE_UP_SHARE
        ? 'close-up (>= 20% of the width)'
        : luma < 60
          ? 'dark (mean luma < 60)'
          : label.w / label.h < 1.9
            ? 'angle or two rows (box under 1.9:1)'
            : 'mid-size, lit, upright';
  const near = candidates.filter((c) => boxIoU(c.box, label) >= 0.1);
  const stage = fills.some((f) => boxIoU(f, label) > 0)
    ? 'filled in part (misplaced or partial)'
    : near.length === 0
      ? 'no candidate from either signal'
      : near.some((c) => (c.text?.characters.length ?? 0) > 0)
        ? 'candidate not confirmed (text read but not plate-like)'
        : 'candidate not confirmed (no text read)';
  return `${stage}; ${condition}`;
}

function tallySource(photos: readonly PhotoEvidence[], rule: PlateRule): Tally {
  const t = emptyTally();
  for (const p of photos) {
    t.photos++;
    const fills = selectPlates(p.candidates, p.size, rule).map(fillBox);
    t.fills += offLabels(fills, p.labels).length;
    if (fills.length > 0) t.photosWithFill++;
    p.labels.forEach((label, i) => {
      const found = hidden(fills, label);
      const share = label.w / p.size.width;
      t.plates++;
      if (found) t.found++;
      if (share >= CLOSE_UP_SHARE) {
        t.closePlates++;
        if (found) t.closeFound++;
      }
      if (share < 0.08) {
        t.farPlates++;
        if (found) t.farFound++;
      }
      if (!found)
        t.misses.push({
          file: p.file,
          label,
          cause: missCause(label, p.size, p.labelLuma[i] ?? 128, p.candidates, fills),
        });
    });
  }
  return t;
}

/**
 * The grid every choice is made from: the thresholds, and the aspect gate as shipped (two-row plates
 * pass) or at 1.2 as before; the other gates stay as shipped. `>1` turns a text rule off.
 */
function textRuleGrid(): PlateRule[] {
  const rules: PlateRule[] = [];
  for (const minAspect of [PLATE_RULE.minAspect, 1.2])
    for (const threshold of [0.3, 0.35, 0.4, 0.45, 0.5])
      for (const textConfirms of [0.7, 0.8, 0.9, 0.95, 2])
        for (const textAlone of [0.8, 0.9, 0.95, 0.98, 2])
          rules.push({ ...PLATE_RULE, minAspect, threshold, textConfirms, textAlone });
  return rules;
}

/**
 * The plate-text rules the grid tries besides its thresholds: each of the shipped reading rules on or off
 * (up to 10 characters or 9; digit look-alikes counted or not; capitals only or any case). The shipped
 * combination comes first: it wins a tie.
 */
const TEXT_FORMATS: readonly { readonly name: string; readonly options: PlateTextOptions }[] = [
  10, 9,
].flatMap((maxCharacters) =>
  [true, false].flatMap((digitLookAlikes) =>
    [true, false].map((capitalsOnly) => ({
      name: `4-${maxCharacters}${digitLookAlikes ? ' look-alikes' : ''}${capitalsOnly ? ' capitals' : ''}`,
      options: { maxCharacters, digitLookAlikes, capitalsOnly },
    })),
  ),
);

/** The evidence with every text reading judged again under `options`, as the finder would have judged it. */
function judgedUnder(photos: readonly PhotoEvidence[], options: PlateTextOptions): PhotoEvidence[] {
  return photos.map((p) => ({
    ...p,
    candidates: p.candidates.map((c) => {
      if (!c.text) return c;
      const { characters, score } = plateText(
        c.text.reading,
        { width: c.text.box.w, height: c.text.box.h },
        options,
      );
      return { ...c, text: { ...c.text, characters, score } };
    }),
  }));
}

interface Choice {
  readonly rule: PlateRule;
  readonly format: (typeof TEXT_FORMATS)[number];
}

const judgedSources = (bySource: Map<string, PhotoEvidence[]>, options: PlateTextOptions) =>
  new Map([...bySource].map(([source, photos]) => [source, judgedUnder(photos, options)]));

/** Mean over the sources of misses per plate (plate sources) and `DAMAGE_COST` x fills per photo (plate-less). */
function costOn(bySource: Map<string, PhotoEvidence[]>, rule: PlateRule): number {
  let cost = 0;
  for (const [source, photos] of bySource) {
    const t = tallySource(photos, rule);
    cost += (PLATE_SOURCES as readonly string[]).includes(source)
      ? (t.plates - t.found) / Math.max(1, t.plates)
      : (DAMAGE_COST * t.fills) / Math.max(1, t.photos);
  }
  return cost / Math.max(1, bySource.size);
}

/** The rule and text format of least cost; on a tie, the shipped ones, then the first in the grid. */
function chooseRule(bySource: Map<string, PhotoEvidence[]>): Choice {
  let best: Choice = { rule: PLATE_RULE, format: TEXT_FORMATS[0]! };
  let bestCost = Number.POSITIVE_INFINITY;
  for (const format of TEXT_FORMATS) {
    const judged = judgedSources(bySource, format.options);
    for (const rule of [PLATE_RULE, ...textRuleGrid()]) {
      const cost = costOn(judged, rule);
      if (cost < bestCost - 1e-12) {
        best = { rule, format };
        bestCost = cost;
      }
    }
  }
  return best;
}

const pct = (k: number, n: number) => {
  if (n === 0) return 'n/a';
  const [lo, hi] = wilson(k, n);
  return `${(k / n).toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] (${k}/${n})`;
};

const ruleText = ({ rule: r, format }: Choice) =>
  `t=${r.threshold} aspect>=${r.minAspect} text=${r.textConfirms > 1 ? 'off' : r.textConfirms} alone=${r.textAlone > 1 ? 'off' : r.textAlone} chars=${format.name}`;

/** Leave-one-source-out figures, printed as markdown tables (docs/quality.md takes them as they are). */
function reportSources(evidence: readonly PhotoEvidence[]): string {
  const bySource = new Map<string, PhotoEvidence[]>();
  for (const e of evidence) bySource.set(e.source, [...(bySource.get(e.source) ?? []), e]);
  const lines = [
    '| held out | photos | rule chosen on the others | plate recall | close-up recall | far recall | fills off the labels per photo | shipped rule: recall or fills, both signals | the same, text off |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const misses: Tally['misses'] = [];
  const textOff = { ...PLATE_RULE, textConfirms: 2, textAlone: 2 };
  for (const source of [...PLATE_SOURCES, ...PLATELESS_SOURCES]) {
    const held = bySource.get(source);
    if (!held) continue;
    const others = new Map([...bySource].filter(([s]) => s !== source));
    const choice = chooseRule(others);
    const t = tallySource(judgedUnder(held, choice.format.options), choice.rule);
    // Judged again: the evidence keeps the readings as read, and its scores may predate the shipped rules.
    const asShipped = judgedUnder(held, {});
    const off = tallySource(asShipped, textOff);
    const shipped = tallySource(asShipped, PLATE_RULE);
    const brief = (x: Tally) => (plated(x) ? pct(x.found, x.plates) : pct(x.fills, x.photos));
    misses.push(...t.misses.map((m) => ({ ...m, cause: `${source}: ${m.cause}` })));
    const plated = (x: Tally) => x.plates > 0;
    lines.push(
      `| ${source} | ${t.photos} | ${ruleText(choice)} | ${plated(t) ? pct(t.found, t.plates) : '-'} | ` +
        `${plated(t) ? pct(t.closeFound, t.closePlates) : '-'} | ${plated(t) ? pct(t.farFound, t.farPlates) : '-'} | ` +
        `${pct(t.fills, t.photos)} | ${brief(shipped)} | ${brief(off)} |`,
    );
  }
  const causes = new Map<string, number>();
  for (const m of misses) causes.set(m.cause, (causes.get(m.cause) ?? 0) + 1);
  lines.push('', '| misses by cause (held-out rules) | plates |', '|---|---|');
  for (const [cause, n] of [...causes].sort()) lines.push(`| ${cause} | ${n} |`);
  const all = chooseRule(bySource);
  const seconds = evidence.map((e) => e.seconds).sort((a, b) => a - b);
  lines.push(
    '',
    `Rule chosen on every source: ${ruleText(all)} (shipped: ${ruleText({ rule: PLATE_RULE, format: TEXT_FORMATS[0]! })}).`,
    `Evidence seconds per photo (readText all): p50 ${seconds[Math.floor(seconds.length / 2)]?.toFixed(2)}.`,
    '',
    'Misses (held-out rules):',
    ...misses.map(
      (m) => `- ${path.basename(m.file)} ${m.cause} (${Math.round(m.label.w)}x${Math.round(m.label.h)} px)`,
    ),
  );
  return lines.join('\n');
}

export async function evalPlateSources(evalDir: string, models: ModelCache, outDir: string): Promise<void> {
  const out = path.join(outDir, 'plate-evidence.jsonl');
  await collectEvidence(evalDir, models, out);
  console.log(
    `\n## Plates, leave one source out\n\n${reportSources(await readJsonLines<PhotoEvidence>(out))}`,
  );
}
