/**
 * The scale ladder (issue 34, item 1): is a plate still found when it is small in a 12 MP photo?
 * 1. Plates: each labelled plate of the plate sources (eu, us, br, ro, in) that the service's finder finds
 *    in its own photo (`hidden`, as in plate-sources.ts).
 * 2. Frames: two real photos of those sources, a street (eu7) and a car park (car9), enlarged and cropped
 *    to 4000x3000 (`frameFit`): no dev photo is that large. Their own plates are labelled (plates.csv,
 *    plates-other.csv), so fills on them are not counted as false.
 * 3. For each plate and rung, its whole photo shrunk so that its label is the rung's height (never
 *    enlarged: rungs above the plate's own height are skipped), pasted in the frame's lower half off the
 *    frame's plates where there is room (`pastePosition`), encoded as JPEG q90 and searched through
 *    `openSource` and `find`, as the service does. Plates take the two frames in turn.
 * 4. Per rung: recall with its 95% Wilson interval, and per source, frame and view (a close-up photo or
 *    a scene); fills that hide no known plate of either photo, per composite. Evidence in eval-out/plate-ladder-*.jsonl, a line per photo or composite: a rerun reads
 *    it back (delete it after a change of the finder). Photos go in `ladderOrder`, so PLATE_EVAL_SAMPLE=n
 *    (n photos a source) reports the first part of a run stopped early.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { openSource } from '#vision/image-io.ts';
import type { Box, Size } from '#vision/math/geometry.ts';
import type { ModelCache } from '#vision/models.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import type { PlateDetector } from '#vision/plate-detector.ts';
import { wilson } from './analysis.ts';
import {
  CLOSE_UP_SHARE,
  fillBoxOf,
  hidden,
  offLabels,
  PLATE_SOURCES,
  readJsonLines,
  type SourcePhoto,
  sourcePhotos,
} from './plate-sources.ts';

/** Plate heights in px; 60 and 10 bracket the issue's 40, 25 and 15 to show where recall falls. */
const LADDER_RUNGS = [60, 40, 25, 15, 10] as const;
export const FRAME_SIZE: Size = { width: 4000, height: 3000 };
/** Paths under ../shared/eval. */
const LADDER_FRAMES = [
  { name: 'street', file: 'plates/eu/eu7.jpg' },
  { name: 'car park', file: 'plates/us/car9.jpg' },
] as const;
const RECALL_FLOOR = 0.9;
/** Places across the lower half that a paste may take. */
const SLOTS = 5;

/** A picture scaled by `sx`, `sy` with its top-left at `x`, `y` of another. */
export interface Placement {
  readonly sx: number;
  readonly sy: number;
  readonly x: number;
  readonly y: number;
}

export const placeBox = (b: Box, p: Placement): Box => ({
  x: p.x + b.x * p.sx,
  y: p.y + b.y * p.sy,
  w: b.w * p.sx,
  h: b.h * p.sy,
});

export interface FrameFit {
  /** The photo is resized to this, then `frame`'s size is cut from it at `left`, `top`. */
  readonly resized: Size;
  readonly left: number;
  readonly top: number;
  /** Where the photo's pixels land in the frame. */
  readonly placement: Placement;
}

/** The photo scaled to cover `frame` and cut at the centre: the crop loses one direction's margins only. */
export function frameFit(photo: Size, frame: Size = FRAME_SIZE): FrameFit {
  const s = Math.max(frame.width / photo.width, frame.height / photo.height);
  const resized = {
    width: Math.max(frame.width, Math.round(photo.width * s)),
    height: Math.max(frame.height, Math.round(photo.height * s)),
  };
  const left = Math.floor((resized.width - frame.width) / 2);
  const top = Math.floor((resized.height - frame.height) / 2);
  return {
    resized,
    left,
    top,
    placement: {
      sx: resized.width / photo.width,
      sy: resized.height / photo.height,
      x: -left,
      y: -top,
    },
  };
}

/**
 * The photo's size once shrunk so that `label` is `rung` px high; undefined where that would enlarge it
 * (the ladder measures plates made smaller, not upscaled ones).
 */
export function rungSize(photo: Size, label: Box, rung: number): Size | undefined {
  const s = rung / label.h;
  if (s > 1) return undefined;
  return {
    width: Math.max(1, Math.round(photo.width * s)),
    height: Math.max(1, Math.round(photo.height * s)),
  };
}

const overlapArea = (a: Box, b: Box) =>
  Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) *
  Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));

/**
 * Where a paste of `paste` goes in `frame`: centred a quarter of the height above the bottom edge (where
 * cars stand in a street or car-park photo), so within the lower half unless taller than it (then on the
 * bottom edge); across, the first of `SLOTS` places from slot `turn` that covers none of `avoid` (the
 * frame's plates), else the one covering least of them.
 */
export function pastePosition(
  frame: Size,
  paste: Size,
  avoid: readonly Box[],
  turn: number,
): { x: number; y: number } {
  const y = Math.max(
    0,
    Math.min(frame.height - paste.height, Math.round(0.75 * frame.height - paste.height / 2)),
  );
  let best: { x: number; y: number; covered: number } | undefined;
  for (let k = 0; k < SLOTS; k++) {
    const centre = (frame.width * (((turn + k) % SLOTS) + 0.5)) / SLOTS;
    const x = Math.max(0, Math.min(frame.width - paste.width, Math.round(centre - paste.width / 2)));
    const rect = { x, y, w: paste.width, h: paste.height };
    const covered = avoid.reduce((sum, b) => sum + overlapArea(rect, b), 0);
    if (covered === 0) return { x, y };
    if (!best || covered < best.covered) best = { x, y, covered };
  }
  return { x: best!.x, y: best!.y };
}

/** The frame's plates a paste at `rect` leaves in sight: one it overlaps at all is no longer that plate. */
export const uncovered = (plates: readonly Box[], rect: Box): Box[] =>
  plates.filter((p) => overlapArea(p, rect) === 0);

/**
 * The photos in the ladder's order: each source's in an order fixed by a hash of the file's name, the
 * sources in turn, at most `perSource` of each. Any first part of the full order is then a sample of every
 * source spread through its list (ro's frames come a video at a time), and a sample's evidence is the
 * full run's.
 */
export function ladderOrder<T extends { readonly file: string; readonly source: string }>(
  photos: readonly T[],
  perSource = Number.POSITIVE_INFINITY,
): T[] {
  const hash = (s: string) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
    return h;
  };
  const bySource = new Map<string, T[]>();
  for (const p of photos) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
  const lists = [...bySource.values()].map((list) =>
    list
      .map((p) => ({ p, h: hash(path.basename(p.file)) }))
      .sort((a, b) => a.h - b.h || a.p.file.localeCompare(b.p.file))
      .map(({ p }) => p)
      .slice(0, perSource),
  );
  const longest = Math.max(0, ...lists.map((l) => l.length));
  return Array.from({ length: longest }, (_, i) =>
    lists.flatMap((l) => (i < l.length ? [l[i]!] : [])),
  ).flat();
}

export interface RungResult {
  readonly rung: number;
  readonly source: string;
  readonly frame: string;
  /**
   * 'close-up' where the plate spans `CLOSE_UP_SHARE` of its photo's width or more: shrunk, such a photo
   * is a plate with little car around it, which no vehicle pass finds. 'scene' otherwise.
   */
  readonly view: 'close-up' | 'scene';
  readonly found: boolean;
  /** Fills that hide no known plate of the frame or of the pasted photo. */
  readonly offLabels: number;
}

export interface RungTally {
  readonly rung: number;
  readonly plates: number;
  readonly found: number;
  readonly offLabels: number;
  readonly withOffLabels: number;
  readonly bySource: ReadonlyMap<string, { plates: number; found: number }>;
  readonly byFrame: ReadonlyMap<string, { plates: number; found: number }>;
  readonly byView: ReadonlyMap<string, { plates: number; found: number }>;
}

export function tallyRungs(results: readonly RungResult[]): RungTally[] {
  return LADDER_RUNGS.map((rung) => {
    const at = results.filter((r) => r.rung === rung);
    const by = (key: (r: RungResult) => string) => {
      const groups = new Map<string, { plates: number; found: number }>();
      for (const r of at) {
        const g = groups.get(key(r)) ?? { plates: 0, found: 0 };
        groups.set(key(r), { plates: g.plates + 1, found: g.found + (r.found ? 1 : 0) });
      }
      return groups;
    };
    return {
      rung,
      plates: at.length,
      found: at.filter((r) => r.found).length,
      offLabels: at.reduce((sum, r) => sum + r.offLabels, 0),
      withOffLabels: at.filter((r) => r.offLabels > 0).length,
      bySource: by((r) => r.source),
      byFrame: by((r) => r.frame),
      byView: by((r) => r.view),
    };
  }).filter((t) => t.plates > 0);
}

/**
 * The smallest rung at which recall is at least `floor` with every larger rung holding it too: the
 * ladder holds down to there. Undefined when the largest rung already falls short.
 */
export function holdsDownTo(tallies: readonly RungTally[], floor = RECALL_FLOOR): number | undefined {
  let held: number | undefined;
  for (const t of [...tallies].sort((a, b) => b.rung - a.rung)) {
    if (t.found < floor * t.plates) break;
    held = t.rung;
  }
  return held;
}

/** The largest rung whose recall is under `floor`. */
export function firstBelow(tallies: readonly RungTally[], floor = RECALL_FLOOR): number | undefined {
  return [...tallies].sort((a, b) => b.rung - a.rung).find((t) => t.found < floor * t.plates)?.rung;
}

const interval = (k: number, n: number) => {
  const [lo, hi] = wilson(k, n);
  return `[${lo.toFixed(3)}, ${hi.toFixed(3)}]`;
};

/** Markdown tables (docs/quality.md takes them as they are): per rung, then per source, frame and view. */
export function ladderReport(tallies: readonly RungTally[]): string {
  const lines = [
    '| plate height | plates | found | recall | 95% interval | fills off the labels per composite | composites with one [95%] |',
    '|---|---|---|---|---|---|---|',
    ...tallies.map(
      (t) =>
        `| ${t.rung} px | ${t.plates} | ${t.found} | ${(t.found / t.plates).toFixed(3)} | ${interval(t.found, t.plates)} | ` +
        `${(t.offLabels / t.plates).toFixed(2)} | ${(t.withOffLabels / t.plates).toFixed(3)} ${interval(t.withOffLabels, t.plates)} |`,
    ),
  ];
  for (const group of ['bySource', 'byFrame', 'byView'] as const) {
    const keys = [...new Set(tallies.flatMap((t) => [...t[group].keys()]))];
    lines.push(
      '',
      `| plate height | ${keys.join(' | ')} |`,
      `|---|${keys.map(() => '---').join('|')}|`,
      ...tallies.map((t) => {
        const cells = keys.map((k) => {
          const c = t[group].get(k);
          return c ? `${c.found}/${c.plates}` : '-';
        });
        return `| ${t.rung} px | ${cells.join(' | ')} |`;
      }),
    );
  }
  const held = holdsDownTo(tallies);
  const below = firstBelow(tallies);
  lines.push(
    '',
    `Recall >= ${RECALL_FLOOR} down to: ${held === undefined ? 'no rung' : `${held} px`}; ` +
      `first rung below ${RECALL_FLOOR}: ${below === undefined ? 'none' : `${below} px`}.`,
  );
  return lines.join('\n');
}

export interface LadderFrame {
  readonly name: string;
  readonly file: string;
  /** Raw RGB, `FRAME_SIZE`. */
  readonly pixels: Buffer;
  /** Known plates, in frame pixels. */
  readonly plates: readonly Box[];
}

/** A frame photo enlarged and cut to `FRAME_SIZE`, with its known plates moved with it. */
async function loadFrame(file: string, plates: readonly Box[]): Promise<LadderFrame> {
  const { width, height } = await sharp(file).metadata();
  const fit = frameFit({ width: width!, height: height! });
  const pixels = await sharp(file)
    .removeAlpha()
    .resize(fit.resized.width, fit.resized.height, { fit: 'fill' })
    .extract({ left: fit.left, top: fit.top, width: FRAME_SIZE.width, height: FRAME_SIZE.height })
    .raw()
    .toBuffer();
  const name = LADDER_FRAMES.find((f) => file.endsWith(f.file))?.name ?? path.basename(file);
  return { name, file, pixels, plates: plates.map((p) => placeBox(p, fit.placement)) };
}

export interface Composite {
  readonly bytes: Buffer;
  /** The plate on the ladder, in frame pixels. */
  readonly plate: Box;
  /** Every known plate in sight: the frame's left uncovered, and the pasted photo's. */
  readonly known: readonly Box[];
}

/**
 * `photo` shrunk so that `photo.labels[label]` is `rung` px high, pasted into `frame`; undefined where
 * the plate is smaller than the rung. `others`: the photo's known plates besides its labels.
 */
export async function composite(
  frame: LadderFrame,
  photo: SourcePhoto,
  label: number,
  rung: number,
  turn: number,
  others: readonly Box[] = [],
): Promise<Composite | undefined> {
  const bytes = await readFile(photo.file);
  const { width, height } = await sharp(bytes).metadata();
  const size = { width: width!, height: height! };
  const target = photo.labels[label]!;
  const shrunk = rungSize(size, target, rung);
  if (!shrunk) return undefined;
  const at = pastePosition(FRAME_SIZE, shrunk, frame.plates, turn);
  const placement = { sx: shrunk.width / size.width, sy: shrunk.height / size.height, ...at };
  const paste = await sharp(bytes)
    .removeAlpha()
    .resize(shrunk.width, shrunk.height, { fit: 'fill' })
    .toBuffer();
  const raw = { width: FRAME_SIZE.width, height: FRAME_SIZE.height, channels: 3 as const };
  const out = await sharp(frame.pixels, { raw })
    .composite([{ input: paste, left: at.x, top: at.y }])
    .jpeg({ quality: 90 })
    .toBuffer();
  const rect = { x: at.x, y: at.y, w: shrunk.width, h: shrunk.height };
  return {
    bytes: out,
    plate: placeBox(target, placement),
    known: [
      ...uncovered(frame.plates, rect),
      ...[...photo.labels, ...others].map((b) => placeBox(b, placement)),
    ],
  };
}

/** Whether the finder finds the composite's plate, and its fills off every known plate. */
export async function judge(
  detector: PlateDetector,
  c: Composite,
): Promise<{ found: boolean; fills: Box[]; offLabels: number }> {
  const fills = (await detector.find(await openSource(c.bytes))).map(fillBoxOf);
  return { found: hidden(fills, c.plate), fills, offLabels: offLabels(fills, c.known).length };
}

/** plates-other.csv: plates of other cars in plates.csv photos, by absolute path. */
async function otherPlates(evalDir: string): Promise<Map<string, Box[]>> {
  const rows = (await readFile(path.join(import.meta.dirname, 'plates-other.csv'), 'utf8'))
    .trim()
    .split(/\r?\n/)
    .slice(1);
  const byFile = new Map<string, Box[]>();
  for (const row of rows) {
    const [file, ...cells] = row.split(',');
    const [x, y, w, h] = cells.map(Number) as [number, number, number, number];
    const key = path.join(evalDir, file!);
    byFile.set(key, [...(byFile.get(key) ?? []), { x, y, w, h }]);
  }
  return byFile;
}

/** Every photo of the sources (not a sample), the plates of other cars, and the frames with their plates. */
export async function ladderSetup(
  evalDir: string,
): Promise<{ every: SourcePhoto[]; others: Map<string, Box[]>; frames: LadderFrame[] }> {
  const every = await sourcePhotos(evalDir, Number.POSITIVE_INFINITY);
  const others = await otherPlates(evalDir);
  const frames: LadderFrame[] = [];
  for (const spec of LADDER_FRAMES) {
    const file = path.join(evalDir, spec.file);
    const known = [...(every.find((p) => p.file === file)?.labels ?? []), ...(others.get(file) ?? [])];
    frames.push(await loadFrame(file, known));
  }
  return { every, others, frames };
}

interface OwnSize {
  readonly file: string;
  readonly found: readonly boolean[];
}

interface RungLine extends RungResult {
  readonly key: string;
  readonly plate: Box;
  readonly fills: readonly Box[];
  readonly seconds: number;
}

const percent = (k: number, n: number) => `${k}/${n}`;

export async function evalPlateLadder(evalDir: string, models: ModelCache, outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const detector = await plateDetector(models);
  const { every, others, frames } = await ladderSetup(evalDir);
  const photos = ladderOrder(
    every.filter((p) => (PLATE_SOURCES as readonly string[]).includes(p.source)),
    Number(process.env.PLATE_EVAL_SAMPLE) || Number.POSITIVE_INFINITY,
  );

  // 1. What the finder does on each frame alone.
  const bare: string[] = [];
  for (const frame of frames) {
    const raw = { width: FRAME_SIZE.width, height: FRAME_SIZE.height, channels: 3 as const };
    const bytes = await sharp(frame.pixels, { raw }).jpeg({ quality: 90 }).toBuffer();
    const fills = (await detector.find(await openSource(bytes))).map(fillBoxOf);
    bare.push(
      `${frame.name} (${path.relative(evalDir, frame.file)}): ${frame.plates.filter((p) => hidden(fills, p)).length} of its ` +
        `${frame.plates.length} known plates found, ${offLabels(fills, frame.plates).length} fills off them`,
    );
  }

  // 2. Photo by photo, so that a run stopped early has whole plates of every source: whether the finder
  // finds each plate at its own size, then each found one at every rung it can be shrunk to.
  const ownFile = path.join(outDir, 'plate-ladder-own.jsonl');
  const own = new Map((await readJsonLines<OwnSize>(ownFile)).map((o) => [o.file, o]));
  const ladderFile = path.join(outDir, 'plate-ladder.jsonl');
  const done = new Map((await readJsonLines<RungLine>(ladderFile)).map((l) => [l.key, l]));
  const results: RungLine[] = [];
  let turn = 0;
  for (const photo of photos) {
    let ownSize = own.get(photo.file);
    if (!ownSize) {
      const fills = (await detector.find(await openSource(await readFile(photo.file)))).map(fillBoxOf);
      ownSize = { file: photo.file, found: photo.labels.map((l) => hidden(fills, l)) };
      own.set(photo.file, ownSize);
      await appendFile(ownFile, `${JSON.stringify(ownSize)}\n`);
    }
    const { width } = await sharp(photo.file).metadata();
    for (const [label, found] of ownSize.found.entries()) {
      if (!found) continue;
      // Judged again on cached lines too: older ones were written without it.
      const view = photo.labels[label]!.w >= CLOSE_UP_SHARE * width! ? 'close-up' : 'scene';
      // Never a plate in its own photo: the frame would show the same car twice.
      const pick = turn % frames.length;
      const frame = frames[frames[pick]!.file === photo.file ? (pick + 1) % frames.length : pick]!;
      for (const rung of LADDER_RUNGS) {
        const key = `${photo.file}#${label}@${rung} in ${frame.name}`;
        const cached = done.get(key);
        if (cached) {
          results.push({ ...cached, view });
          continue;
        }
        const c = await composite(frame, photo, label, rung, turn, others.get(photo.file));
        if (!c) continue;
        const start = performance.now();
        const judged = await judge(detector, c);
        const line: RungLine = {
          key,
          rung,
          source: photo.source,
          frame: frame.name,
          view,
          plate: c.plate,
          ...judged,
          seconds: (performance.now() - start) / 1000,
        };
        results.push(line);
        await appendFile(ladderFile, `${JSON.stringify(line)}\n`);
      }
      turn++;
    }
    if (own.size % 25 === 0) console.error(`plate ladder: ${own.size} photos, ${results.length} composites`);
  }

  const perSource = PLATE_SOURCES.map((s) => {
    const of = photos.filter((p) => p.source === s).map((p) => own.get(p.file)!.found);
    return `${s} ${percent(of.flat().filter(Boolean).length, of.flat().length)}`;
  });
  const seconds = results.map((r) => r.seconds).sort((a, b) => a - b);
  return [
    `\n## Plates: the scale ladder (issue 34), ${detector.modelVersion}`,
    `Plates found at their own size (of those labelled): ${perSource.join(', ')}.`,
    `Frames alone: ${bare.join('; ')}.`,
    '',
    ladderReport(tallyRungs(results)),
    '',
    `Composites per frame: ${frames.map((f) => `${f.name} ${results.filter((r) => r.frame === f.name).length}`).join(', ')}; ` +
      `find seconds per composite p50 ${seconds[Math.floor(seconds.length / 2)]?.toFixed(2)}.`,
  ].join('\n');
}
