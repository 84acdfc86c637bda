/**
 * Fits the `analyze` head (models/heads/analyze-head.json): a photo-type layer (exterior, interior,
 * podium) and a view layer (8 views) over the features of layers/vision/math/features.ts, on every
 * labelled source of ../shared/eval (tools/analyze-samples.ts: listing photos, street photos, podium
 * composites, with crops, close-ups and mirror images).
 *
 *   npm run fit-analyze-head -- [--eval-dir ../shared/eval] [--out models/heads/analyze-head.json] [--view-only]
 *
 * `--view-only` refits the view layer alone and keeps the photo-type layer and the thresholds of the file
 * at --out: for a change that only the view layer sees (the turntable frames), without the hours of
 * cross-validation that a fit of both layers costs on a busy 2-core machine. The held-out figures are then
 * `npm run eval`'s (or a run without it).
 *
 * 1. Observe every sample through the operation's own code (cached in .cache/analyze-samples).
 * 2. Two multinomial logistic regressions (softmax) on the same standardised features, L2 penalty, L-BFGS
 *    from zero weights: deterministic (tools/softmax.ts, tools/analyze-fit.ts). The photo-type layer
 *    learns from every sample but the turntable frames; the view layer from the samples whose view is
 *    labelled (listing exteriors, their composites, the street photos a person could give a view:
 *    test/eval/street-views.csv, and the turntable frames, those near a sector border weighted by
 *    FIT_SETTINGS). Every sample is also fitted mirrored, its view's left and right swapped.
 * 3. Grouped k-fold cross-validation: a listing photo's car model is its group, and its composites share
 *    it, so a car never sits on both sides; a street photo is its own group; the seed fixes the folds.
 *    Held-out predictions average the photo's and its mirror's probabilities, as the operation does.
 *    The turntable frames are held out one car at a time (`leaveOneCarOut`).
 * 4. The 800 thresholds come from the held-out predictions of the real photos (`chooseThresholds`).
 * 5. Fit on everything and write the weights as integers in units of 1e-4 (checked against the exact fit
 *    before writing: tools/analyze-head-file.ts), then let Biome format the file as `npm run lint` expects.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { VIEWS } from '#vision/math/vocabulary.ts';
import {
  chooseThresholds,
  crossValidate,
  DEFAULT_EVAL_DIR,
  FIT_SETTINGS,
  fitHeads,
  fitView,
  HEAD_VERSION,
  type HeadModels,
  leaveOneCarOut,
  loadSamples,
  nearBorder,
  outcome,
  predictSample,
  REPO_ROOT,
  type Thresholds,
  viewLabel,
} from './analyze-fit.ts';
import { type HeadFile, headFile, modelsOfFile, writeHeadFile } from './analyze-head-file.ts';
import type { Sample } from './analyze-samples.ts';

export function formatConfusion(confusion: number[][]): string {
  const short = ['front', 'rear', 'side_L', 'side_R', '3q_L', '3q_R', 'r3q_L', 'r3q_R'];
  const lines = [`${'true \\ predicted'.padEnd(26)}${short.map((s) => s.padStart(7)).join('')}`];
  confusion.forEach((row, i) => {
    lines.push(`${VIEWS[i]!.padEnd(26)}${row.map((v) => String(v).padStart(7)).join('')}`);
  });
  return lines.join('\n');
}

export const argmax = (p: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
};

async function main() {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(name);
    return at >= 0 && args[at + 1] ? path.resolve(args[at + 1]!) : fallback;
  };
  const evalDir = option('--eval-dir', DEFAULT_EVAL_DIR);
  const out = option('--out', path.join(REPO_ROOT, 'models', 'heads', 'analyze-head.json'));
  const samples = await loadSamples(evalDir, console.log);
  const count = (source: string) => samples.filter((s) => s.photo.source === source).length;
  console.log(
    `${samples.length} samples: listing ${count('listing')}, street ${count('street')}, podium ${count('podium')}, ` +
      `turntable ${count('turntable')}`,
  );

  if (args.includes('--view-only')) {
    const shipped = JSON.parse(await readFile(out, 'utf8')) as HeadFile;
    const started = performance.now();
    const models = { photoType: modelsOfFile(shipped).photoType, view: fitView(samples, FIT_SETTINGS) };
    console.log(`view layer fitted in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await write(samples, models, shipped, out);
    return;
  }
  const held = crossValidate(samples, FIT_SETTINGS, { log: console.log });
  const thresholds = chooseThresholds(held, samples);
  console.log(`thresholds ${JSON.stringify(thresholds)}`);
  for (const source of ['listing', 'street', 'podium'] as const) {
    const orig = samples.filter((s) => s.photo.source === source && s.augmentation === 'orig');
    const outcomes = orig.map((s) => outcome(s, held.get(s.id)!, thresholds));
    const right = outcomes.filter((o, i) => !o.refused && o.photoType === orig[i]!.photo.photoType).length;
    const refused = outcomes.filter((o) => o.refused).length;
    const viewed = orig.filter((s) => s.photo.view);
    const views = viewed.filter((s) => argmax(held.get(s.id)!.view) === viewLabel(s, false)).length;
    console.log(
      `CV ${source}: photo_type ${right}/${orig.length}, refused ${refused}` +
        (viewed.length ? `, view (argmax) ${views}/${viewed.length}` : ''),
    );
  }
  const turntable = samples.filter((s) => s.photo.source === 'turntable');
  if (turntable.length > 0) {
    const loco = leaveOneCarOut(samples, FIT_SETTINGS, { log: console.log });
    for (const [name, frames] of [
      ['all', turntable],
      ['away from a border', turntable.filter((s) => !nearBorder(s))],
    ] as const) {
      const right = (p: typeof loco.held) =>
        frames.filter((s) => argmax(p.get(s.id)!.view) === viewLabel(s, false)).length;
      console.log(
        `turntable, ${name}: view (argmax) ${right(loco.held)}/${frames.length} one car left out, ` +
          `${right(loco.withoutTurntable)}/${frames.length} fitted without any turntable frame`,
      );
    }
  }

  const started = performance.now();
  const models = fitHeads(samples);
  console.log(`final fit in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  await write(samples, models, thresholds, out);
}

/** The head file of `models`, checked against the exact fit, written to `out`. */
async function write(samples: readonly Sample[], models: HeadModels, thresholds: Thresholds, out: string) {
  const file = headFile(
    models,
    { minTypeConfidence: thresholds.minTypeConfidence, minInteriorStrength: thresholds.minInteriorStrength },
    {
      data:
        '../shared/eval: photos.csv (listing: 400, 200 interiors), plates/ (street: 223 exteriors, the view of ' +
        '198 labelled by eye in test/eval/street-views.csv), podium composites of every other listing exterior (100), ' +
        'each on one of the 4 rendered backdrops in turn; crops and close-ups of the real photos; ' +
        (FIT_SETTINGS.turntableWeight > 0
          ? 'extra/turntable.csv (517 frames of 14 cars on a show turntable, view from the rotation; view layer only); '
          : '') +
        'every sample also mirrored with left/right swapped',
      samples: samples.length,
      method: 'two multinomial logistic regressions (photo type, view), L2, L-BFGS from zero weights',
      ...FIT_SETTINGS,
    },
  );
  const stored = modelsOfFile(file);
  const agree = samples.filter((s) => {
    const a = predictSample(stored, s);
    const b = predictSample(models, s);
    return argmax(a.photoType) === argmax(b.photoType) && argmax(a.view) === argmax(b.view);
  }).length;
  console.log(`stored head agrees with the exact fit on ${agree}/${samples.length} samples`);
  const size = await writeHeadFile(file, out);
  console.log(`wrote ${out} (${(size / 1024).toFixed(0)} KB, version ${HEAD_VERSION})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
