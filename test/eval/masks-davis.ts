/**
 * Edges at full resolution, measured on ../shared/eval/extra/masks-davis (77 DAVIS 2016 frames of cars with
 * hand-drawn masks, 854 x 480): ISNet's matte brought to the photo's size as the service did before
 * (`toPhotoSize`: cubic upscale and feather) against the guided refinement (`refineMatte`), both from the
 * same model matte. Figures per frame, averaged:
 * - IoU of the foreground (alpha >= 128) with the mask;
 * - boundary F-measure as DAVIS defines it: boundary pixels of each matched within a tolerance of 0.8% of
 *   the image diagonal (8 px here), a square window instead of DAVIS's disk.
 * The model mattes are kept in .cache/eval-davis so that trying refinement settings costs no model run.
 * Run alone: `node --import tsx test/eval/masks-davis.ts` (PHOTO_JOBS_DAVIS_GRID=1 also tries a grid).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { decodeSource } from '#vision/image-io.ts';
import type { Matte } from '#vision/math/matte.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import { DEFAULT_REFINE, type RefineOptions, refineMatte } from '#vision/refine.ts';
import { isnetSegmenter } from '#vision/segmenter.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface MaskFigures {
  readonly iou: number;
  readonly boundaryF: number;
}

export function iouOf(matte: Matte, truth: Uint8Array): number {
  let inter = 0;
  let union = 0;
  for (let i = 0; i < truth.length; i++) {
    const a = matte.alpha[i]! >= 128;
    const b = truth[i] === 1;
    if (a && b) inter++;
    if (a || b) union++;
  }
  return union ? inter / union : 1;
}

/** Foreground pixels with a 4-neighbour in the background. */
function boundary(mask: Uint8Array, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!mask[i]) continue;
      if (
        (x > 0 && !mask[i - 1]) ||
        (x < w - 1 && !mask[i + 1]) ||
        (y > 0 && !mask[i - w]) ||
        (y < h - 1 && !mask[i + w])
      )
        out[i] = 1;
    }
  }
  return out;
}

/** The mask grown by `r` pixels (a square window). */
export function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const pass = (src: Uint8Array, dx: number, dy: number) => {
    const out = new Uint8Array(src.length);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (!src[y * w + x]) continue;
        for (let d = -r; d <= r; d++) {
          const nx = x + d * dx;
          const ny = y + d * dy;
          if (nx >= 0 && nx < w && ny >= 0 && ny < h) out[ny * w + nx] = 1;
        }
      }
    }
    return out;
  };
  return pass(pass(mask, 1, 0), 0, 1);
}

export function boundaryF(matte: Matte, truth: Uint8Array): number {
  const { width: w, height: h } = matte;
  const tolerance = Math.ceil(0.008 * Math.hypot(w, h));
  const pred = boundary(
    Uint8Array.from(matte.alpha, (a) => (a >= 128 ? 1 : 0)),
    w,
    h,
  );
  const gt = boundary(truth, w, h);
  const near = (a: Uint8Array, b: Uint8Array) => {
    const grown = dilate(b, w, h, tolerance);
    let n = 0;
    let hit = 0;
    for (let i = 0; i < a.length; i++) {
      if (!a[i]) continue;
      n++;
      if (grown[i]) hit++;
    }
    return n ? hit / n : 1;
  };
  const precision = near(pred, gt);
  const recall = near(gt, pred);
  return precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
}

interface Frame {
  readonly name: string;
  readonly image: Awaited<ReturnType<typeof decodeSource>>;
  readonly truth: Uint8Array;
  readonly small: Matte;
}

export async function loadFrames(evalDir: string, models: ModelCache): Promise<Frame[]> {
  const dir = path.join(evalDir, 'extra');
  const csv = (await readFile(path.join(dir, 'masks-davis.csv'), 'utf8')).trim().split('\n').slice(1);
  const cacheDir = path.join(repoRoot, '.cache', 'eval-davis');
  await mkdir(cacheDir, { recursive: true });
  const segmenter = await isnetSegmenter(models);
  const frames: Frame[] = [];
  for (const line of csv) {
    const [file, maskFile] = line.split(',');
    const cached = path.join(cacheDir, `${path.basename(file!, '.jpg')}.png`);
    // PHOTO_JOBS_DAVIS_CACHED=1: only frames whose model matte is kept already (trying settings quickly).
    if (process.env.PHOTO_JOBS_DAVIS_CACHED && !existsSync(cached)) continue;
    const image = await decodeSource(await readFile(path.join(dir, file!)));
    const { data, info } = await sharp(path.join(dir, maskFile!))
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.width !== image.width || info.height !== image.height) throw new Error(`${maskFile} size`);
    const truth = Uint8Array.from(data, (v) => (v > 127 ? 1 : 0));
    let small: Matte;
    if (existsSync(cached)) {
      const m = await sharp(cached).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
      small = { width: m.info.width, height: m.info.height, alpha: new Uint8Array(m.data) };
    } else {
      small = await segmenter.modelMatte(image);
      await sharp(small.alpha, { raw: { width: small.width, height: small.height, channels: 1 } })
        .png()
        .toFile(cached);
    }
    frames.push({ name: path.basename(file!), image, truth, small });
  }
  return frames;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The DAVIS sequence a frame belongs to (`car-turn-00012.jpg` → `car-turn`): frames of a clip are near copies. */
const clipOf = (frame: string) => frame.replace(/-\d+\.\w+$/, '');

interface FrameFigures {
  readonly name: string;
  readonly clip: string;
  readonly before: MaskFigures;
  readonly after: MaskFigures;
}

export interface DavisFigures {
  readonly frames: number;
  readonly before: MaskFigures;
  readonly after: MaskFigures;
  /** Frames where the refinement lowered the boundary F-measure by more than 0.01. */
  readonly worse: number;
  readonly perFrame: readonly FrameFigures[];
}

const avg = (xs: readonly MaskFigures[]): MaskFigures => ({
  iou: mean(xs.map((x) => x.iou)),
  boundaryF: mean(xs.map((x) => x.boundaryF)),
});

function summarise(perFrame: readonly FrameFigures[]): DavisFigures {
  return {
    frames: perFrame.length,
    before: avg(perFrame.map((f) => f.before)),
    after: avg(perFrame.map((f) => f.after)),
    worse: perFrame.filter((f) => f.after.boundaryF < f.before.boundaryF - 0.01).length,
    perFrame,
  };
}

/** The service's matte before the refinement, per frame, computed once for every setting tried. */
const coarseCache = new WeakMap<Frame, Promise<{ matte: Matte; figures: MaskFigures }>>();

export async function evalDavis(
  evalDir: string,
  models: ModelCache,
  options: RefineOptions = DEFAULT_REFINE,
  loaded?: Frame[],
): Promise<DavisFigures> {
  const frames = loaded ?? (await loadFrames(evalDir, models));
  const segmenter = await isnetSegmenter(models);
  const perFrame: FrameFigures[] = [];
  for (const f of frames) {
    let before = coarseCache.get(f);
    if (!before) {
      before = segmenter
        .toPhotoSize({ ...f.small, alpha: Uint8Array.from(f.small.alpha) }, f.image.width, f.image.height)
        .then((matte) => ({
          matte,
          figures: { iou: iouOf(matte, f.truth), boundaryF: boundaryF(matte, f.truth) },
        }));
      coarseCache.set(f, before);
    }
    const { matte: coarse, figures } = await before;
    const refined = await refineMatte(f.small, f.image, coarse, options);
    perFrame.push({
      name: f.name,
      clip: clipOf(f.name),
      before: figures,
      after: { iou: iouOf(refined, f.truth), boundaryF: boundaryF(refined, f.truth) },
    });
  }
  return summarise(perFrame);
}

export function davisReport(f: DavisFigures): string {
  const p = (v: number) => v.toFixed(4);
  return (
    `DAVIS car masks (${f.frames} frames, 854x480): mean IoU ${p(f.before.iou)} -> ${p(f.after.iou)}, ` +
    `mean boundary F ${p(f.before.boundaryF)} -> ${p(f.after.boundaryF)}; ` +
    `${f.worse} frames with boundary F lower by > 0.01`
  );
}

/**
 * A setting chosen on some clips: the highest mean IoU among those whose mean boundary F is not below the
 * service's before the refinement (ties: the higher boundary F, then the earlier setting in the list).
 */
function choose(
  results: readonly { readonly options: RefineOptions; readonly perFrame: readonly FrameFigures[] }[],
  clips: ReadonlySet<string>,
): number {
  let best = -1;
  let bestIou = -Infinity;
  let bestF = -Infinity;
  for (const [i, r] of results.entries()) {
    const s = summarise(r.perFrame.filter((f) => clips.has(f.clip)));
    if (s.after.boundaryF < s.before.boundaryF) continue;
    if (
      s.after.iou > bestIou + 1e-9 ||
      (Math.abs(s.after.iou - bestIou) <= 1e-9 && s.after.boundaryF > bestF)
    ) {
      best = i;
      bestIou = s.after.iou;
      bestF = s.after.boundaryF;
    }
  }
  return best;
}

/** Settings the leave-one-clip-out run chooses among (the shipped one first). */
function refineGrid(): RefineOptions[] {
  const grid: RefineOptions[] = [DEFAULT_REFINE];
  for (const radius of [2, 3, 4]) {
    for (const eps of [1e-3, 1e-2]) {
      for (const low of [64, 80])
        grid.push({ ...DEFAULT_REFINE, radius, eps, feather: { low, high: low + 128 } });
    }
  }
  return grid;
}

/**
 * Leave one clip out: for each of the clips, the setting is chosen (`choose`) on the other clips' frames and
 * measured on the held-out clip's, so every frame's figure comes from a setting its clip did not choose.
 * The shipped setting is the one chosen on all clips.
 */
function leaveOneClipOut(
  results: readonly { readonly options: RefineOptions; readonly perFrame: readonly FrameFigures[] }[],
): { folds: { clip: string; chosen: number; held: DavisFigures }[]; heldOut: DavisFigures; all: number } {
  const clips = [...new Set(results[0]!.perFrame.map((f) => f.clip))];
  const folds = clips.map((clip) => {
    const chosen = choose(results, new Set(clips.filter((c) => c !== clip)));
    return { clip, chosen, held: summarise(results[chosen]!.perFrame.filter((f) => f.clip === clip)) };
  });
  return {
    folds,
    heldOut: summarise(folds.flatMap((f) => f.held.perFrame)),
    all: choose(results, new Set(clips)),
  };
}

const describeOptions = (o: RefineOptions) =>
  `radius ${o.radius}, eps ${o.eps}, feather ${o.feather.low}..${o.feather.high}`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
  const models = modelCache({});
  const frames = await loadFrames(evalDir, models);
  const shipped = await evalDavis(evalDir, models, DEFAULT_REFINE, frames);
  console.log(davisReport(shipped));
  const p = (v: number) => v.toFixed(4);
  const byClip = (f: DavisFigures) =>
    [...new Set(f.perFrame.map((x) => x.clip))].map((clip) => {
      const s = summarise(f.perFrame.filter((x) => x.clip === clip));
      return `  ${clip} (${s.frames}): IoU ${p(s.before.iou)} -> ${p(s.after.iou)}, boundary F ${p(s.before.boundaryF)} -> ${p(s.after.boundaryF)}`;
    });
  console.log(byClip(shipped).join('\n'));
  // PHOTO_JOBS_DAVIS_CONFIGS='[{"radius":2,"eps":0.001,"feather":{"low":96,"high":224}}]' tries those.
  for (const o of JSON.parse(process.env.PHOTO_JOBS_DAVIS_CONFIGS ?? '[]') as Partial<RefineOptions>[]) {
    const f = await evalDavis(evalDir, models, { ...DEFAULT_REFINE, ...o }, frames);
    console.log(`${JSON.stringify(o)}: ${davisReport(f)}`);
  }
  // PHOTO_JOBS_DAVIS_LOCO=1: the grid, chosen leave-one-clip-out (docs/quality.md reports this run).
  if (process.env.PHOTO_JOBS_DAVIS_LOCO) {
    const results = [];
    for (const options of refineGrid()) {
      const f = await evalDavis(evalDir, models, options, frames);
      console.log(`${describeOptions(options)}: ${davisReport(f)}`);
      results.push({ options, perFrame: f.perFrame });
    }
    const loco = leaveOneClipOut(results);
    for (const fold of loco.folds) {
      const s = fold.held;
      console.log(
        `held out ${fold.clip} (${s.frames}): chosen ${describeOptions(results[fold.chosen]!.options)}; ` +
          `IoU ${p(s.before.iou)} -> ${p(s.after.iou)}, boundary F ${p(s.before.boundaryF)} -> ${p(s.after.boundaryF)}`,
      );
    }
    console.log(`held out by clip: ${davisReport(loco.heldOut)}`);
    console.log(`chosen on all clips: ${describeOptions(results[loco.all]!.options)}`);
  }
}
