/**
 * `npm run bench -- stages [--runs N]`: where a `plate` job's time goes, per photo of the bench (the three
 * listing photos and the street, made by `npm run bench` first): each onnxruntime run by model and input,
 * each sharp call by what it reads and writes (a JPEG decoded at some scale, a crop cut from decoded
 * pixels, the result encoded), counted and timed per job, beside the job's wall and CPU time (all threads
 * of the process). Calls overlap (the whole decode runs beside the first passes), so stage times can sum
 * to more than the job's wall; the CPU time is the figure that survives a busy machine. One process,
 * warm: one job per photo first, then N each.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { modelCache } from '#vision/models.ts';
import { type HidePlatesParams, hidePlates } from '#vision/operations/hide-plates.ts';
import { plateDetector } from '#vision/operations/plate.ts';

type Tally = Map<string, { calls: number; ms: number }>;

/** Wraps sharp's `toBuffer` and onnxruntime's `run` so that each call adds its wall time to `tally`. */
function instrument(tally: Tally): void {
  const add = (stage: string, started: number) => {
    const t = tally.get(stage) ?? { calls: 0, ms: 0 };
    t.calls++;
    t.ms += performance.now() - started;
    tally.set(stage, t);
  };
  // sharp keeps what a pipeline reads and writes in `options` (not typed): raw input has a rawWidth.
  type Pipeline = { options: { input?: { rawWidth?: number }; formatOut?: string; width?: number } };
  const proto = sharp.prototype as unknown as { toBuffer: (...args: unknown[]) => Promise<unknown> };
  const toBuffer = proto.toBuffer;
  proto.toBuffer = function (this: Pipeline, ...args: unknown[]) {
    const started = performance.now();
    const { input, formatOut, width } = this.options;
    const stage = input?.rawWidth
      ? formatOut === 'raw'
        ? 'sharp crop/resize of decoded pixels'
        : `sharp encode (${formatOut})`
      : `sharp decode ${width !== undefined && width > 0 ? 'shrunk on load' : 'whole'}`;
    return toBuffer.apply(this, args).finally(() => add(stage, started));
  };
  type Run = (
    this: ort.InferenceSession,
    feeds: Record<string, ort.Tensor>,
    ...rest: unknown[]
  ) => Promise<unknown>;
  // The factory's type hides the class whose prototype every session shares.
  const session = (ort.InferenceSession as unknown as { prototype: { run: Run } }).prototype;
  const run = session.run;
  session.run = function (this: ort.InferenceSession, feeds, ...rest) {
    const started = performance.now();
    const model = this.outputNames.includes('iou')
      ? 'LPD-YuNet'
      : this.outputNames.length > 2
        ? 'NanoDet'
        : 'PP-OCR';
    const dims = Object.values(feeds)[0]!.dims;
    const size = model === 'PP-OCR' ? '' : ` ${Number(dims[3]) >= 500 ? '>= 500' : '< 500'} px wide`;
    return run.call(this, feeds, ...rest).finally(() => add(`onnxruntime ${model}${size}`, started));
  };
}

export async function plateStages(benchPhotos: string[], runs: number): Promise<string[]> {
  const tally: Tally = new Map();
  instrument(tally);
  const detector = await plateDetector(modelCache({}));
  const params: HidePlatesParams = { plateColor: '#141414', plateSmoothing: true, plateMaskOnly: false };
  const sources = await Promise.all(benchPhotos.map((file) => readFile(file)));
  for (const source of sources) await hidePlates({ detector }, source, params);
  const lines: string[] = [];
  for (const [i, source] of sources.entries()) {
    tally.clear();
    const wall: number[] = [];
    const cpu: number[] = [];
    const load = os.loadavg()[0]!;
    let plates = 0;
    for (let r = 0; r < runs; r++) {
      const usage = process.cpuUsage();
      const started = performance.now();
      plates = (await hidePlates({ detector }, source, params)).plates.length;
      wall.push(performance.now() - started);
      const { user, system } = process.cpuUsage(usage);
      cpu.push((user + system) / 1000);
    }
    lines.push(
      `${path.basename(benchPhotos[i]!)}: ${plates} plate(s); per job wall ${median(wall).toFixed(0)} ms, ` +
        `CPU ${median(cpu).toFixed(0)} ms (medians of ${runs}; load average ${load.toFixed(1)} before)`,
    );
    for (const [stage, { calls, ms }] of [...tally].sort((a, b) => b[1].ms - a[1].ms))
      lines.push(
        `  ${stage.padEnd(42)} ${(calls / runs).toFixed(1).padStart(5)} a job ${(ms / runs).toFixed(0).padStart(6)} ms`,
      );
  }
  return lines;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
