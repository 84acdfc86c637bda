/**
 * Windows: is there a signal, cheap and without a glass model, that says whether the old background shows
 * through a car's glass? Measured on a sample labelled by eye (test/eval/windows-labels.csv: 40 exterior
 * listing photos of ../shared/eval, 5 per view, evenly spread over those whose ISNet matte
 * test/eval/studio.ts keeps in .cache/eval-studio; docs/quality.md, Windows, says how they were labelled).
 * The signals: the share of the main car's outline (ISNet's largest component, holes filled, its edge ramp
 * eroded away) where ISNet's own matte is not opaque, i.e. where ISNet itself half saw through the car; and
 * colour consistency (`backgroundColourShare`): how much of the car's upper half has the old background's
 * colours and not the paint's.
 * The threshold is chosen leave-one-out (on the other 39 photos, the best accuracy), so no photo's verdict
 * comes from a threshold chosen on it. Run alone, after test/eval/studio.ts has kept the mattes:
 * `node --import tsx test/eval/windows.ts`.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { dilateSquare, labelComponents, type Matte } from '#vision/math/matte.ts';
import { wilson } from './analysis.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Below this alpha, a pixel inside the outline counts as not opaque (ISNet's solid car is 255). */
const OPAQUE = 230;
/** The outline's edge ramp eroded away, in pixels of the 1024 px matte. */
const EDGE = 6;

/** The main car's outline: pixels outside it, and those within `EDGE` of outside (its edge ramp). */
function carOutline(matte: Matte): { outside: Uint8Array; nearOutside: Uint8Array } | null {
  const { width: w, height: h } = matte;
  const { labels, sizes } = labelComponents(matte, 127);
  if (sizes.length < 2) return null;
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
  return { outside, nearOutside: dilateSquare(outside, w, h, EDGE) };
}

/** The share of the main car's filled, eroded outline where the matte is below `OPAQUE`. */
function translucentShare(matte: Matte): number {
  const outline = carOutline(matte);
  if (!outline) return 0;
  const { nearOutside } = outline;
  let inside = 0;
  let clear = 0;
  for (let i = 0; i < matte.alpha.length; i++) {
    if (nearOutside[i]) continue;
    inside++;
    if (matte.alpha[i]! < OPAQUE) clear++;
  }
  return inside ? clear / inside : 0;
}

/** Colour bins (16 levels a channel) of an RGB pixel. */
const bin = (rgb: Uint8Array, i: number) =>
  ((rgb[i * 3]! >> 4) << 8) | ((rgb[i * 3 + 1]! >> 4) << 4) | (rgb[i * 3 + 2]! >> 4);

/**
 * The second signal, colour consistency: the share of the upper half of the car's outline (where glass is)
 * whose colour is common in a ring of old background around the car (at least 0.5% of the ring's pixels
 * in its 16-level bin) and rare in the lower half of the car (under 0.5% of its pixels: not body paint).
 * `rgb` is the photo at the matte's size.
 */
function backgroundColourShare(matte: Matte, rgb: Uint8Array): number {
  const outline = carOutline(matte);
  if (!outline) return 0;
  const { width: w, height: h } = matte;
  const { outside, nearOutside } = outline;
  const inside = Uint8Array.from(nearOutside, (v) => (v ? 0 : 1));
  const ring = dilateSquare(inside, w, h, 40);
  let top = h;
  let bottom = -1;
  for (let i = 0; i < inside.length; i++) {
    if (!inside[i]) continue;
    const y = Math.floor(i / w);
    top = Math.min(top, y);
    bottom = Math.max(bottom, y);
  }
  if (bottom < 0) return 0;
  const middle = (top + bottom) / 2;
  const ringHist = new Float64Array(4096);
  const lowHist = new Float64Array(4096);
  let ringN = 0;
  let lowN = 0;
  for (let i = 0; i < inside.length; i++) {
    if (ring[i] && outside[i] && !nearOutside[i]) {
      ringHist[bin(rgb, i)]!++;
      ringN++;
    } else if (inside[i] && Math.floor(i / w) > middle) {
      lowHist[bin(rgb, i)]!++;
      lowN++;
    }
  }
  let upper = 0;
  let like = 0;
  for (let i = 0; i < inside.length; i++) {
    if (!inside[i] || Math.floor(i / w) > middle) continue;
    upper++;
    const b = bin(rgb, i);
    if (ringHist[b]! >= 0.005 * ringN && lowHist[b]! < 0.005 * lowN) like++;
  }
  return upper ? like / upper : 0;
}

interface Sample {
  readonly file: string;
  readonly view: string;
  readonly glass: boolean;
  readonly doubtful: boolean;
  /** ISNet's translucent share inside the car (`translucentShare`). */
  readonly share: number;
  /** The background-coloured share of the car's upper half (`backgroundColourShare`). */
  readonly colour: number;
}

type Signal = 'share' | 'colour';

/** The threshold with the best accuracy on `train` (ties: the lowest), the midpoint between two shares. */
function bestThreshold(train: readonly Sample[], signal: Signal): number {
  const shares = [...new Set(train.map((s) => s[signal]))].sort((a, b) => a - b);
  const cuts = [
    shares[0]! - 1e-6,
    ...shares.slice(1).map((s, i) => (s + shares[i]!) / 2),
    shares.at(-1)! + 1e-6,
  ];
  let best = cuts[0]!;
  let bestRight = -1;
  for (const t of cuts) {
    const right = train.filter((s) => s[signal] > t === s.glass).length;
    if (right > bestRight) {
      best = t;
      bestRight = right;
    }
  }
  return best;
}

export function windowsReport(samples: readonly Sample[], signal: Signal): string {
  const predicted = samples.map(
    (s, i) =>
      s[signal] >
      bestThreshold(
        samples.filter((_, j) => j !== i),
        signal,
      ),
  );
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
      `  ${s.glass ? 'glass ' : 'opaque'}${s.doubtful ? '?' : ' '} ${signal} ${s[signal].toFixed(3)} -> ${predicted[i] ? 'glass ' : 'opaque'}  ${s.view.padEnd(26)} ${s.file}`,
  );
  return [
    ...lines,
    `${signal}: threshold chosen on all ${samples.length}: ${bestThreshold(samples, signal).toFixed(3)}`,
    `leave-one-out, all: ${score(() => true)}`,
    `leave-one-out, labels not doubtful: ${score((s) => !s.doubtful)}`,
  ].join('\n');
}

export async function evalWindows(evalDir: string): Promise<Sample[]> {
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
    const matte = { width: m.info.width, height: m.info.height, alpha: new Uint8Array(m.data) };
    // The photo squeezed to the matte's size, as ISNet saw it.
    const rgb = await sharp(path.join(evalDir, file!))
      .removeAlpha()
      .resize(matte.width, matte.height, { fit: 'fill' })
      .raw()
      .toBuffer();
    samples.push({
      file: file!,
      view: view!,
      glass: glass === 'yes',
      doubtful: doubtful === 'yes',
      share: translucentShare(matte),
      colour: backgroundColourShare(matte, new Uint8Array(rgb)),
    });
  }
  return samples;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const samples = await evalWindows(path.resolve(repoRoot, '..', 'shared', 'eval'));
  console.log(windowsReport(samples, 'share'));
  console.log(windowsReport(samples, 'colour'));
}
