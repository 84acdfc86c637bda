/**
 * The `analyze` part of `npm run eval`: held-out figures per source, each with a 95% Wilson interval.
 * 1. Every labelled sample of ../shared/eval (tools/analyze-samples.ts: listing photos, street photos,
 *    podium composites, crops and close-ups), observed through the operation's own code.
 * 2. Grouped 5-fold cross-validation with the fitting script's own code: a car model (a listing photo and
 *    its composites) or a street photo is in one fold only, so every figure is a prediction of a fit that
 *    did not see that car or that photo, nor any crop of it. Never training-set predictions.
 * 3. The shipped head's 800 thresholds applied to those held-out predictions, as the operation would:
 *    a refused photo counts as not right. Figures are over the photos as they are; crops and close-ups
 *    get their own rows.
 * 4. Street photos once more, predicted by a fit that saw no street photo at all: what the head does on a
 *    kind of photo it was not fitted on (the situation the independent set found). Their views are ours
 *    (test/eval/street-views.csv), labelled by eye where a person would not hesitate.
 * 5. The listing views once more with the labels that contradict the photo corrected
 *    (listing-view-corrections.csv), beside the figure on the labels as given.
 * 6. The turntable frames (extra/turntable.csv, view from the rotation), each predicted by a head fitted
 *    without its car (leave one car out; the photo-type layer never sees a turntable frame), per car and
 *    apart for the frames within FIT_SETTINGS.borderDegrees of a sector border (their label may be the
 *    neighbour's); and by a head fitted on no turntable frame.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  crossValidate,
  FIT_SETTINGS,
  fitHeads,
  leaveOneCarOut,
  loadSamples,
  nearBorder,
  type Outcome,
  outcome,
  predictSample,
  viewLabel,
} from '#tools/analyze-fit.ts';
import type { Sample } from '#tools/analyze-samples.ts';
import { formatConfusion } from '#tools/fit-analyze-head.ts';
import type { HeadProbabilities } from '#vision/math/head.ts';
import { VIEWS, type View } from '#vision/math/vocabulary.ts';
import { analyzeHead } from '#vision/operations/analyze.ts';

/** 95% Wilson score interval of a proportion. */
export function wilson(successes: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

interface Figure {
  readonly name: string;
  readonly k: number;
  readonly n: number;
  readonly value: number;
  readonly ci: [number, number];
  readonly target?: number;
}

const figure = (name: string, k: number, n: number, target?: number): Figure => ({
  name,
  k,
  n,
  value: n ? k / n : Number.NaN,
  ci: wilson(k, n),
  ...(target === undefined ? {} : { target }),
});

const argmax = (p: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < p.length; i++) if (p[i]! > p[best]!) best = i;
  return best;
};

function figuresOf(
  label: string,
  samples: readonly Sample[],
  held: ReadonlyMap<string, HeadProbabilities>,
  outcomes: ReadonlyMap<string, Outcome>,
  targets: { type?: number; view?: number } = {},
): Figure[] {
  if (samples.length === 0) return [];
  const right = samples.filter((s) => {
    const o = outcomes.get(s.id)!;
    return !o.refused && o.photoType === s.photo.photoType;
  }).length;
  const refused = samples.filter((s) => outcomes.get(s.id)!.refused).length;
  const out = [
    figure(`${label}: photo_type right (800 counts as wrong)`, right, samples.length, targets.type),
    figure(`${label}: refused with 800`, refused, samples.length),
  ];
  const viewed = samples.filter((s) => s.photo.view);
  if (viewed.length > 0) {
    const endToEnd = viewed.filter((s) => {
      const o = outcomes.get(s.id)!;
      return !o.refused && o.view === s.photo.view;
    }).length;
    const best = viewed.filter((s) => argmax(held.get(s.id)!.view) === viewLabel(s, false)).length;
    out.push(
      figure(`${label}: view right, 8 classes (800 counts as wrong)`, endToEnd, viewed.length, targets.view),
      figure(`${label}: view right, 8 classes, best view of every labelled photo`, best, viewed.length),
    );
  }
  return out;
}

const fmt = (v: number) => v.toFixed(3);

function formatFigures(figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    f.name,
    `${f.k}/${f.n}`,
    fmt(f.value),
    `${fmt(f.ci[0])}-${fmt(f.ci[1])}`,
    f.target === undefined ? '' : `>= ${f.target} ${f.value >= f.target ? 'met' : 'NOT met'}`,
  ]);
  const header = ['figure', 'k/n', 'value', '95% CI (Wilson)', 'target'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Listing views whose label contradicts the photo, by file: test/eval/listing-view-corrections.csv. */
async function readViewCorrections(): Promise<Map<string, View>> {
  const text = await readFile(path.join(import.meta.dirname, 'listing-view-corrections.csv'), 'utf8');
  return new Map(
    text
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const [file, view] = line.split(',') as [string, View];
        if (!VIEWS.includes(view)) throw new Error(`listing-view-corrections.csv: unknown view ${view}`);
        return [file, view];
      }),
  );
}

export interface AnalysisReport {
  readonly head: string;
  readonly thresholds: { minTypeConfidence: number; minInteriorStrength: number };
  readonly figures: Figure[];
}

export async function evalAnalysis(evalDir: string, outDir: string): Promise<AnalysisReport> {
  const head = analyzeHead();
  const started = performance.now();
  const samples = await loadSamples(evalDir, (line) => console.log(`  ${line}`));
  console.log(
    `\nanalyze (${head.version}): ${samples.length} samples observed in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      `${FIT_SETTINGS.folds}-fold CV grouped by car model (listing photos and their composites) and by photo (street)`,
  );
  const held = crossValidate(samples, FIT_SETTINGS, { log: (line) => console.log(`  ${line}`) });
  const outcomes = new Map(
    samples.filter((s) => held.has(s.id)).map((s) => [s.id, outcome(s, held.get(s.id)!, head)]),
  );
  const of = (source: string, augmentation = 'orig', extra: (s: Sample) => boolean = () => true) =>
    samples.filter((s) => s.photo.source === source && s.augmentation === augmentation && extra(s));

  const figures: Figure[] = [
    ...figuresOf('listing photos', of('listing'), held, outcomes, { type: 0.98, view: 0.92 }),
    ...figuresOf(
      'listing exteriors',
      of('listing', 'orig', (s) => s.photo.photoType === 'exterior'),
      held,
      outcomes,
    ),
    ...figuresOf(
      'listing interiors',
      of('listing', 'orig', (s) => s.photo.photoType === 'interior'),
      held,
      outcomes,
    ),
    ...figuresOf('street photos (plates/), exterior', of('street'), held, outcomes, { type: 0.97 }),
    ...['eu', 'us', 'br'].flatMap((region) =>
      figuresOf(
        `street photos ${region}`,
        of('street', 'orig', (s) => s.photo.file.startsWith(`plates/${region}/`)),
        held,
        outcomes,
      ).slice(0, 2),
    ),
    ...figuresOf('podium composites', of('podium'), held, outcomes),
    ...figuresOf('listing crops', of('listing', 'crop'), held, outcomes),
    ...figuresOf('listing close-ups', of('listing', 'closeup'), held, outcomes),
    ...figuresOf('street crops', of('street', 'crop'), held, outcomes),
    ...figuresOf('street close-ups', of('street', 'closeup'), held, outcomes),
  ];

  // The street photos predicted by a head that never saw one.
  const unseen = fitHeads(samples.filter((s) => s.photo.source !== 'street'));
  const street = of('street');
  const unseenHeld = new Map(street.map((s) => [s.id, predictSample(unseen, s)]));
  const unseenOutcomes = new Map(street.map((s) => [s.id, outcome(s, unseenHeld.get(s.id)!, head)]));
  figures.push(
    ...figuresOf('street photos, head fitted without any street photo', street, unseenHeld, unseenOutcomes),
  );

  // The listing views as given, and once more with the labels a person reading the photo would not give
  // corrected (listing-view-corrections.csv: only labels that contradict the photo, not close calls).
  // The head is fitted on the labels as given either way.
  const corrections = await readViewCorrections();
  const listingViews = of('listing', 'orig', (s) => s.photo.view !== null);
  const corrected = (s: Sample) => corrections.get(s.photo.file) ?? s.photo.view;
  figures.push(
    figure(
      `listing exteriors: view right, ${corrections.size} wrong labels corrected (800 counts as wrong)`,
      listingViews.filter((s) => {
        const o = outcomes.get(s.id)!;
        return !o.refused && o.view === corrected(s);
      }).length,
      listingViews.length,
      0.92,
    ),
  );

  const turntable = of('turntable');
  if (turntable.length > 0) {
    const loco = leaveOneCarOut(samples, FIT_SETTINGS, { log: (line) => console.log(`  ${line}`) });
    for (const [id, p] of loco.held) held.set(id, p);
    const answers = (p: ReadonlyMap<string, HeadProbabilities>) =>
      new Map(turntable.map((s) => [s.id, outcome(s, p.get(s.id)!, head)]));
    const locoOutcomes = answers(loco.held);
    const away = turntable.filter((s) => !nearBorder(s));
    const near = turntable.filter((s) => nearBorder(s));
    const border = `${FIT_SETTINGS.borderDegrees} deg`;
    // With turntableWeight 0 (as shipped) no fit saw a turntable frame, and "left out" is every car at once.
    const fitted = FIT_SETTINGS.turntableWeight > 0;
    const heldOut = fitted ? 'turntable, one car left out' : 'turntable, head fitted on no turntable frame';
    figures.push(
      ...figuresOf(heldOut, turntable, loco.held, locoOutcomes),
      ...figuresOf(`${heldOut}, over ${border} from a border`, away, loco.held, locoOutcomes).slice(2),
      ...figuresOf(`${heldOut}, within ${border} of a border`, near, loco.held, locoOutcomes).slice(2),
      ...(fitted
        ? figuresOf(
            'turntable, head fitted on no turntable frame',
            turntable,
            loco.withoutTurntable,
            answers(loco.withoutTurntable),
          ).slice(2)
        : []),
      ...[...new Set(turntable.map((s) => s.photo.group))].map((car) => {
        const frames = turntable.filter((s) => s.photo.group === car);
        const right = frames.filter((s) => argmax(loco.held.get(s.id)!.view) === viewLabel(s, false)).length;
        return figure(`${heldOut}, ${car}: view right, best view`, right, frames.length);
      }),
    );
  }

  console.log(formatFigures(figures));
  for (const source of ['listing', 'street', 'turntable'] as const) {
    const confusion = VIEWS.map(() => VIEWS.map(() => 0));
    for (const s of of(source, 'orig', (x) => x.photo.view !== null && held.has(x.id))) {
      confusion[viewLabel(s, false)]![argmax(held.get(s.id)!.view)]!++;
    }
    console.log(`\nview confusion of the ${source} photos, held out (rows: label, columns: best view)`);
    console.log(formatConfusion(confusion));
  }
  const wrongTypes = new Map<string, number>();
  for (const s of samples.filter((x) => x.augmentation === 'orig' && x.photo.source !== 'turntable')) {
    const o = outcomes.get(s.id)!;
    const said = o.refused ? '800' : o.photoType;
    if (said !== s.photo.photoType) {
      const key = `${s.photo.source} ${s.photo.photoType} -> ${said}`;
      wrongTypes.set(key, (wrongTypes.get(key) ?? 0) + 1);
    }
  }
  console.log('\nphoto_type misses on the photos as they are (source, label -> answer: count)');
  for (const [key, count] of [...wrongTypes].sort((a, b) => b[1] - a[1])) console.log(`  ${key}: ${count}`);

  const report: AnalysisReport = {
    head: head.version,
    thresholds: { minTypeConfidence: head.minTypeConfidence, minInteriorStrength: head.minInteriorStrength },
    figures,
  };
  await mkdir(outDir, { recursive: true });
  const file = path.join(outDir, 'analysis.json');
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nanalysis figures written to ${file}`);
  return report;
}
