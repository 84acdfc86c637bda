/**
 * The main-car step on a source none of its rules was chosen on: the 77 DAVIS car frames, whose masks hold
 * the one annotated car (the other cars of car-roundabout, car-shadow and car-turn are background there).
 * Per frame, ISNet's matte at the photo's size as segmented, against the service's (`mainCarCutout`: the
 * main car kept with NanoDet, then refined), both from the same cached model matte:
 * - IoU with the mask (alpha >= 128);
 * - kept beyond the car: foreground farther than 1% of the diagonal from the mask, as a share of the
 *   foreground (another car, a pole, a ghost joined to the car);
 * - car lost: mask pixels the matte leaves out, as a share of the mask.
 * Run alone: `node --import tsx test/eval/main-car-davis.ts`; part of `npm run eval` (studio).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { carDetector } from '#vision/car-detector.ts';
import { openSource } from '#vision/image-io.ts';
import type { Matte } from '#vision/math/matte.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import { mainCarCutout } from '#vision/operations/main-car.ts';
import { isnetSegmenter } from '#vision/segmenter.ts';
import { dilate, iouOf, loadFrames } from './masks-davis.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface MainCarFigures {
  readonly frames: number;
  readonly raw: { iou: number; beyond: number; lost: number };
  readonly service: { iou: number; beyond: number; lost: number };
  /** Frames where the service's IoU is lower than ISNet's own by more than 0.02, by name. */
  readonly worse: readonly string[];
}

function figures(matte: Matte, truth: Uint8Array, near: Uint8Array) {
  let fg = 0;
  let beyond = 0;
  let car = 0;
  let lost = 0;
  for (let i = 0; i < truth.length; i++) {
    const on = matte.alpha[i]! >= 128;
    if (on) fg++;
    if (on && !near[i]) beyond++;
    if (truth[i]) {
      car++;
      if (!on) lost++;
    }
  }
  return { iou: iouOf(matte, truth), beyond: fg ? beyond / fg : 0, lost: car ? lost / car : 0 };
}

export async function evalMainCarDavis(evalDir: string, models: ModelCache): Promise<MainCarFigures> {
  const [frames, segmenter, cars] = await Promise.all([
    loadFrames(evalDir, models),
    isnetSegmenter(models),
    carDetector(models),
  ]);
  const sums = { raw: { iou: 0, beyond: 0, lost: 0 }, service: { iou: 0, beyond: 0, lost: 0 } };
  const worse: string[] = [];
  for (const frame of frames) {
    const bytes = await readFile(path.join(evalDir, 'extra', 'masks-davis', frame.name));
    const { width, height } = frame.image;
    const near = dilate(frame.truth, width, height, Math.ceil(0.01 * Math.hypot(width, height)));
    const cachedSegmenter = {
      ...segmenter,
      modelMatte: async () => ({ ...frame.small, alpha: Uint8Array.from(frame.small.alpha) }),
    };
    const raw = await segmenter.toPhotoSize(frame.small, width, height);
    const { matte } = await mainCarCutout(
      { segmenter: cachedSegmenter, cars },
      await openSource(bytes),
      Promise.resolve(frame.image),
    );
    const r = figures(raw, frame.truth, near);
    const s = figures(matte, frame.truth, near);
    for (const k of ['iou', 'beyond', 'lost'] as const) {
      sums.raw[k] += r[k];
      sums.service[k] += s[k];
    }
    // PHOTO_JOBS_DAVIS_LOG=1: a line per frame, for paired before/after comparisons of a rule.
    if (process.env.PHOTO_JOBS_DAVIS_LOG)
      console.log(
        `  ${frame.name} iou ${s.iou.toFixed(4)} beyond ${s.beyond.toFixed(4)} lost ${s.lost.toFixed(4)}`,
      );
    if (s.iou < r.iou - 0.02) worse.push(`${frame.name} (${r.iou.toFixed(3)} -> ${s.iou.toFixed(3)})`);
  }
  const n = Math.max(1, frames.length);
  const avg = (x: { iou: number; beyond: number; lost: number }) => ({
    iou: x.iou / n,
    beyond: x.beyond / n,
    lost: x.lost / n,
  });
  return { frames: frames.length, raw: avg(sums.raw), service: avg(sums.service), worse };
}

export function mainCarDavisReport(f: MainCarFigures): string {
  const row = (name: string, x: MainCarFigures['raw']) =>
    `| ${name} | ${x.iou.toFixed(4)} | ${x.beyond.toFixed(4)} | ${x.lost.toFixed(4)} |`;
  return [
    `Main car on ${f.frames} DAVIS frames (the mask is the one annotated car), means per frame:`,
    '| matte | IoU | kept beyond the car | car lost |',
    '|---|---|---|---|',
    row("ISNet's own, at the photo's size", f.raw),
    row('the service (main car, refined)', f.service),
    f.worse.length ? `Frames the main-car step made worse by more than 0.02 IoU: ${f.worse.join(', ')}` : '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
  console.log(mainCarDavisReport(await evalMainCarDavis(evalDir, modelCache({}))));
}
