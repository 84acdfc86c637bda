/**
 * Windows: is there a signal, cheap and without a glass model, that says whether the old background shows
 * through a car's glass? Measured on a sample labelled by eye (test/eval/windows-labels.csv: 40 exterior
 * listing photos of ../shared/eval, 5 per view, evenly spread over those whose ISNet matte
 * test/eval/studio.ts keeps in .cache/eval-studio; docs/quality.md, Windows, says how they were labelled).
 * The signal: the share of the main car's outline (ISNet's largest component, holes filled, its edge ramp
 * eroded away) where ISNet's own matte is not opaque, i.e. where ISNet itself half saw through the car.
 * The threshold is chosen leave-one-out (on the other 39 photos, the best accuracy), so no photo's verdict
 * comes from a threshold chosen on it. Run alone, after test/eval/studio.ts has kept the mattes:
 * `node --import tsx test/eval/windows.ts`.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { labelComponents, type Matte } from '#vision/math/matte.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Below this alpha, a pixel inside the outline counts as not opaque (ISNet's solid car is 255). */
const OPAQUE = 230;
/** The outline's edge ramp eroded away, in pixels of the 1024 px matte. */
const EDGE = 6;

/** Pixels within `r` (square window) of a set pixel. */
function grow(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const pass = (src: Uint8Array, horizontal: boolean) => {
    const out = new Uint8Array(src.length);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (!src[y * w + x]) continue;
        for (let d = -r; d <= r; d++) {
          const nx = horizontal ? x + d : x;
          const ny = horizontal ? y : y + d;
          if (nx >= 0 && nx < w && ny >= 0 && ny < h) out[ny * w + nx] = 1;
        }
      }
    }
    return out;
  };
  return pass(pass(mask, true), false);
}

/** The share of the main car's filled, eroded outline where the matte is below `OPAQUE`. */
export function translucentShare(matte: Matte): number {
  const { width: w, height: h, alpha } = matte;
  const { labels, sizes } = labelComponents(matte, 127);
  if (sizes.length < 2) return 0;
  let main = 1;
  for (let i = 2; i < sizes.length; i++) if (sizes[i]! > sizes[main]!) main = i;
  const car = Uint8Array.from(labels, (l) => (l === main ? 1 : 0));
  // Outside = reached from the border without crossing the car (4-connected flood fill).
  const outside = new Uint8Array(w * h);
  const stack: number[] = [];
  const push = (i: number) => {
    if (!car[i] && !outside[i]) {
      outside[i] = 1;
      stack.push(i);
    }
  };
  for (let x = 0; x < w; x++) {
    push(x);
    push((h - 1) * w + x);
  }
  for (let y = 0; y < h; y++) {
    push(y * w);
    push(y * w + w - 1);
  }
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % w;
    if (x > 0) push(i - 1);
    if (x < w - 1) push(i + 1);
    if (i >= w) push(i - w);
    if (i + w < w * h) push(i + w);
  }
  const nearOutside = grow(outside, w, h, EDGE);
  let inside = 0;
  let clear = 0;
  for (let i = 0; i < w * h; i++) {
    if (nearOutside[i]) continue;
    inside++;
    if (alpha[i]! < OPAQUE) clear++;
  }
  return inside ? clear / inside : 0;
}

/** Wilson score interval (95%) of k successes in n. */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.96;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const m = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - m), Math.min(1, c + m)];
}

interface Sample {
  readonly file: string;
  readonly view: string;
  readonly glass: boolean;
  readonly doubtful: boolean;
  readonly share: number;
}

/** The threshold with the best accuracy on `train` (ties: the lowest), the midpoint between two shares. */
function bestThreshold(train: readonly Sample[]): number {
  const shares = [...new Set(train.map((s) => s.share))].sort((a, b) => a - b);
  const cuts = [
    shares[0]! - 1e-6,
    ...shares.slice(1).map((s, i) => (s + shares[i]!) / 2),
    shares.at(-1)! + 1e-6,
  ];
  let best = cuts[0]!;
  let bestRight = -1;
  for (const t of cuts) {
    const right = train.filter((s) => s.share > t === s.glass).length;
    if (right > bestRight) {
      best = t;
      bestRight = right;
    }
  }
  return best;
}

export function windowsReport(samples: readonly Sample[]): string {
  const predicted = samples.map((s, i) => s.share > bestThreshold(samples.filter((_, j) => j !== i)));
  const score = (keep: (s: Sample) => boolean) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let n = 0;
    let right = 0;
    samples.forEach((s, i) => {
      if (!keep(s)) return;
      n++;
      if (predicted[i] === s.glass) right++;
      if (predicted[i] && s.glass) tp++;
      if (predicted[i] && !s.glass) fp++;
      if (!predicted[i] && s.glass) fn++;
    });
    const f = (k: number, m: number) => {
      const [lo, hi] = wilson(k, m);
      return `${k}/${m} (${m ? (k / m).toFixed(2) : '-'}, 95% ${lo.toFixed(2)}-${hi.toFixed(2)})`;
    };
    return `${n} photos: precision ${f(tp, tp + fp)}, recall ${f(tp, tp + fn)}, accuracy ${f(right, n)}`;
  };
  const lines = samples.map(
    (s, i) =>
      `  ${s.glass ? 'glass ' : 'opaque'}${s.doubtful ? '?' : ' '} share ${s.share.toFixed(3)} -> ${predicted[i] ? 'glass ' : 'opaque'}  ${s.view.padEnd(26)} ${s.file}`,
  );
  return [
    ...lines,
    `threshold chosen on all ${samples.length}: ${bestThreshold(samples).toFixed(3)}`,
    `leave-one-out, all: ${score(() => true)}`,
    `leave-one-out, labels not doubtful: ${score((s) => !s.doubtful)}`,
  ].join('\n');
}

export async function evalWindows(): Promise<Sample[]> {
  const csv = (await readFile(path.join(repoRoot, 'test', 'eval', 'windows-labels.csv'), 'utf8'))
    .trim()
    .split('\n')
    .slice(1);
  const cacheDir = path.join(repoRoot, '.cache', 'eval-studio');
  const samples: Sample[] = [];
  for (const line of csv) {
    const [file, view, glass, doubtful] = line.split(',');
    const name = path.basename(file!, path.extname(file!)).replace(/[^\w-]+/g, '_');
    const cached = path.join(cacheDir, `${name}.png`);
    if (!existsSync(cached)) throw new Error(`${cached} missing: run test/eval/studio.ts first`);
    const m = await sharp(cached).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const share = translucentShare({
      width: m.info.width,
      height: m.info.height,
      alpha: new Uint8Array(m.data),
    });
    samples.push({ file: file!, view: view!, glass: glass === 'yes', doubtful: doubtful === 'yes', share });
  }
  return samples;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(windowsReport(await evalWindows()));
}
