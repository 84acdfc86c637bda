/**
 * How often `background` refuses a car photo with "no foreground" (802), per source (issue 23 point 5).
 * Each photo goes through the operation's own code up to its refusal decision: `openSource`,
 * `mainCarCutout` (ISNet on the reduced copy, NanoDet's main car, the upscale and the guided refinement at
 * the photo's size), `matteStats` and `usableMatte`. The segmenter and the car detector are wrapped only to
 * record what they returned, so that other rules can be tried on the records without another model run:
 * one JSON line per photo in .cache/eval-refusals/records.jsonl and the model matte (1024 x 1024, before the
 * main-car step) beside it as a PNG. A photo already recorded is not run again (delete the folder to rerun).
 *
 * Sources (all photos of a car except `interiors`): listing exteriors (`views`), street plates eu/us/br,
 * Romanian dashcam frames (`ro`: every night frame of nightride_type3_001, ro-0115..ro-0135, and a spread of
 * the day frames), Indian close-ups (`in`), DAVIS frames (`davis`), turntable frames (`turntable`).
 * Run alone: `nice -n 10 node --import tsx test/eval/background-refusals.ts`.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { readPhotos } from '#tools/analyze-samples.ts';
import { carDetector, type ObjectDetector } from '#vision/car-detector.ts';
import { openSource } from '#vision/image-io.ts';
import { FAINT_LEVEL, faintCarMatte } from '#vision/math/faint-car.ts';
import type { Box } from '#vision/math/geometry.ts';
import { keepMainSubject } from '#vision/math/main-subject.ts';
import { type Matte, matteStats, usableMatte } from '#vision/math/matte.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import { mainCarCutout } from '#vision/operations/main-car.ts';
import { isnetSegmenter, type Segmenter } from '#vision/segmenter.ts';
import { wilson } from './analysis.ts';
import { spread } from './backgrounds.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const recordsDir = path.join(repoRoot, '.cache', 'eval-refusals');

/** Photos per source (PHOTO_JOBS_REFUSAL_SAMPLE overrides the default of each); `ro` adds its night frames. */
const DEFAULT_SAMPLE = {
  ro: 14,
  in: 40,
  eu: 25,
  us: 25,
  br: 25,
  views: 25,
  davis: 20,
  turntable: 20,
  interiors: 10,
};
export type RefusalSource = keyof typeof DEFAULT_SAMPLE;
/** Sources whose every photo shows a car: the ones the ≤ 1% target is about. */
const CAR_SOURCES: readonly RefusalSource[] = ['ro', 'in', 'eu', 'us', 'br', 'views', 'davis', 'turntable'];

/** The night frames of plates-ro (video nightride_type3_001, numbered after the 114 day frames). */
const isNightFrame = (file: string) => {
  const m = /ro-(\d{4})\.jpg$/.exec(file);
  return m !== null && Number(m[1]) >= 115;
};

export interface RefusalRecord {
  readonly file: string;
  readonly source: RefusalSource;
  readonly width: number;
  readonly height: number;
  /** NanoDet's distinct vehicles, in shares of the photo's width and height. */
  readonly vehicles: readonly Box[];
  /** The main car, in shares of the photo; null without a vehicle. */
  readonly main: Box | null;
  /** Whether the main-car step changed the matte (foreground touched the main box). */
  readonly applied: boolean;
  /** Foreground share of ISNet's matte as segmented, and of the final matte. */
  readonly rawCoverage: number;
  readonly coverage: number;
  /** The 802 message, or null when the matte was usable. */
  readonly refusal: string | null;
  readonly seconds: number;
  /** The faint-car rule's level the service ran with; absent: recorded before the rule existed. */
  readonly faintLevel?: number;
}

/**
 * Photos per source, spread over each source's list (`ro` adds every night frame). Other evals take their
 * own sizes; PHOTO_JOBS_REFUSAL_SAMPLE ("12" for every source, or "in:20,eu:10" for some) overrides them.
 */
export async function sample(
  sizes: Record<RefusalSource, number> = DEFAULT_SAMPLE,
): Promise<{ file: string; source: RefusalSource }[]> {
  const asked = new Map(
    (process.env.PHOTO_JOBS_REFUSAL_SAMPLE ?? '')
      .split(',')
      .filter(Boolean)
      .map((p) => (p.includes(':') ? (p.split(':') as [string, string]) : (['*', p] as const))),
  );
  const n = (s: RefusalSource) => Number(asked.get(s) ?? asked.get('*') ?? sizes[s]);
  const csv = async (name: string) =>
    (await readFile(path.join(evalDir, 'extra', name), 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]!);
  const unique = (files: string[]) => [...new Set(files)].sort();
  const ro = unique(await csv('plates-ro.csv'));
  const photos = await readPhotos(evalDir);
  const listing = (type: string) =>
    unique(photos.filter((p) => p.source === 'listing' && p.photoType === type).map((p) => p.file));
  const plates = (region: string) =>
    unique(photos.map((p) => p.file).filter((f) => f.startsWith(`plates/${region}/`)));
  const lists: [RefusalSource, string[]][] = [
    [
      'ro',
      [
        ...ro.filter(isNightFrame),
        ...spread(
          ro.filter((f) => !isNightFrame(f)),
          n('ro'),
        ),
      ],
    ],
    ['in', spread(unique(await csv('plates-in.csv')), n('in'))],
    ['eu', spread(plates('eu'), n('eu'))],
    ['us', spread(plates('us'), n('us'))],
    ['br', spread(plates('br'), n('br'))],
    ['views', spread(listing('exterior'), n('views'))],
    ['davis', spread(unique(await csv('masks-davis.csv')), n('davis'))],
    ['turntable', spread(unique(await csv('turntable.csv')), n('turntable'))],
    ['interiors', spread(listing('interior'), n('interiors'))],
  ];
  return lists.flatMap(([source, files]) =>
    files.map((file) => ({
      file:
        file.startsWith('views/') || file.startsWith('interiors/') || file.startsWith('plates/')
          ? file
          : `extra/${file}`,
      source,
    })),
  );
}

const share = (b: Box, w: number, h: number): Box => ({ x: b.x / w, y: b.y / h, w: b.w / w, h: b.h / h });
const coverageOf = (m: Matte) => {
  let n = 0;
  for (const a of m.alpha) if (a >= 128) n++;
  return n / m.alpha.length;
};
const idOf = (file: string) => file.replace(/[/\\]/g, '_');

/** Runs the operation's path on one photo and records what it decided. */
async function recordPhoto(
  segmenter: Segmenter,
  cars: ObjectDetector,
  file: string,
  source: RefusalSource,
): Promise<RefusalRecord> {
  const started = performance.now();
  let raw: Matte | null = null;
  const recording: Segmenter = {
    ...segmenter,
    async modelMatte(image) {
      const m = await segmenter.modelMatte(image);
      raw = { ...m, alpha: Uint8Array.from(m.alpha) };
      return m;
    },
  };
  const levels = await openSource(await readFile(path.join(evalDir, file)));
  const { stats, car } = await mainCarCutout({ segmenter: recording, cars }, levels, levels.atScale(1));
  const verdict = usableMatte(stats);
  const rawMatte = raw as Matte | null;
  if (rawMatte) {
    await sharp(rawMatte.alpha, { raw: { width: rawMatte.width, height: rawMatte.height, channels: 1 } })
      .png()
      .toFile(path.join(recordsDir, `${idOf(file)}.png`));
  }
  // NanoDet looked at the reduced copy; its boxes are in that copy's pixels, the ratio is the same.
  const preview = await levels.atScale(Math.min(1, 1024 / Math.min(levels.width, levels.height)));
  const pw = preview.width;
  const ph = preview.height;
  return {
    file,
    source,
    width: levels.width,
    height: levels.height,
    vehicles: (car?.vehicles ?? []).map((b) => share(b, pw, ph)),
    main: car?.box ? share(car.box, pw, ph) : null,
    applied: car?.cleared?.applied ?? false,
    rawCoverage: rawMatte ? coverageOf(rawMatte) : Number.NaN,
    coverage: stats.coverage,
    refusal: verdict.ok ? null : verdict.message,
    seconds: (performance.now() - started) / 1000,
    faintLevel: FAINT_LEVEL,
  };
}

async function readRecords(): Promise<RefusalRecord[]> {
  const file = path.join(recordsDir, 'records.jsonl');
  if (!existsSync(file)) return [];
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RefusalRecord);
}

const rate = (k: number, n: number) => {
  const [lo, hi] = wilson(k, n);
  return `${k}/${n} = ${n ? (k / n).toFixed(3) : '-'} (${lo.toFixed(3)}-${hi.toFixed(3)})`;
};

/** Refusals per source with 95% Wilson intervals; "no foreground" (coverage too low) counted apart. */
function refusalTable(records: readonly RefusalRecord[]): string {
  const lines = [
    '| source | photos | no vehicle found | refused "no foreground" | refused, any 802 |',
    '|---|---|---|---|---|',
  ];
  const sources = [...new Set(records.map((r) => r.source))];
  const row = (name: string, of: readonly RefusalRecord[]) => {
    const none = of.filter((r) => r.refusal?.startsWith('No car')).length;
    const any = of.filter((r) => r.refusal !== null).length;
    lines.push(
      `| ${name} | ${of.length} | ${of.filter((r) => !r.main).length} | ${rate(none, of.length)} | ${rate(any, of.length)} |`,
    );
  };
  for (const s of sources)
    row(
      s,
      records.filter((r) => r.source === s),
    );
  const night = records.filter((r) => isNightFrame(r.file));
  if (night.length) row('ro night frames', night);
  const cars = records.filter((r) => CAR_SOURCES.includes(r.source));
  row('all car sources', cars);
  return lines.join('\n');
}

export async function evalRefusals(models: ModelCache): Promise<RefusalRecord[]> {
  await mkdir(recordsDir, { recursive: true });
  const done = new Set((await readRecords()).map((r) => r.file));
  const [segmenter, cars] = await Promise.all([isnetSegmenter(models), carDetector(models)]);
  const photos = await sample();
  for (const [i, { file, source }] of photos.entries()) {
    if (done.has(file)) continue;
    const record = await recordPhoto(segmenter, cars, file, source);
    await appendFile(path.join(recordsDir, 'records.jsonl'), `${JSON.stringify(record)}\n`);
    console.log(
      `${i + 1}/${photos.length} ${source} ${file} ${(record.coverage * 100).toFixed(1)}% ${record.refusal ?? 'ok'} ${record.seconds.toFixed(1)} s`,
    );
  }
  const records = await readRecords();
  console.log(refusalTable(records));
  return records;
}

/**
 * The rule's decision on a record, from its model matte and NanoDet's boxes at the model's resolution: the
 * main-car step, the coverage limits and, where they say "no foreground", `faintCarMatte` at `level`
 * (null: the rule as it was). Coverage is judged at 1024 x 1024, not after the upscale and refinement, which
 * move it by a fraction of a percent.
 */
async function decideOffline(record: RefusalRecord, level: number | null): Promise<string | null> {
  const { data, info } = await sharp(path.join(recordsDir, `${idOf(record.file)}.png`))
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw: Matte = { width: info.width, height: info.height, alpha: new Uint8Array(data) };
  const scale = (b: Box): Box => ({
    x: b.x * raw.width,
    y: b.y * raw.height,
    w: b.w * raw.width,
    h: b.h * raw.height,
  });
  const vehicles = record.vehicles.map(scale);
  const matte: Matte = { ...raw, alpha: Uint8Array.from(raw.alpha) };
  if (record.main) {
    const main =
      vehicles[record.vehicles.findIndex((v) => v.x === record.main!.x && v.y === record.main!.y)]!;
    keepMainSubject(matte, main, vehicles);
  }
  const verdict = usableMatte(matteStats(matte));
  if (verdict.ok) return null;
  if (level === null || !verdict.message.startsWith('No car')) return verdict.message;
  const faint = faintCarMatte(raw, vehicles, level);
  if (!faint) return verdict.message;
  const again = usableMatte(matteStats(faint));
  return again.ok ? null : again.message;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.env.PHOTO_JOBS_REFUSAL_REPORT) {
    // Before: the rule as it was, offline from each record. After: as the service decided, for records made
    // with the faint-car rule; offline at FAINT_LEVEL for those made before it.
    const records = await readRecords();
    const before: RefusalRecord[] = [];
    const after: RefusalRecord[] = [];
    for (const r of records) {
      before.push({ ...r, refusal: await decideOffline(r, null) });
      after.push(r.faintLevel === FAINT_LEVEL ? r : { ...r, refusal: await decideOffline(r, FAINT_LEVEL) });
    }
    console.log(`before:\n${refusalTable(before)}\n\nafter:\n${refusalTable(after)}`);
    for (const r of after) if (r.refusal) console.log(`  refused after: ${r.file} ${r.refusal}`);
    for (const r of records.filter((x) => x.faintLevel === FAINT_LEVEL)) {
      const offline = await decideOffline(r, FAINT_LEVEL);
      if ((offline === null) !== (r.refusal === null)) console.log(`  offline disagrees: ${r.file}`);
    }
  } else if (process.env.PHOTO_JOBS_REFUSAL_OFFLINE) {
    // Tries the rule on the records: the refusals as the service makes them (measured), then offline.
    const records = await readRecords();
    console.log(`measured:\n${refusalTable(records)}`);
    for (const level of [null, 16, 24, 32, 48, 64]) {
      const decided: RefusalRecord[] = [];
      for (const r of records) decided.push({ ...r, refusal: await decideOffline(r, level) });
      console.log(`\noffline, faint level ${level ?? 'none'}:\n${refusalTable(decided)}`);
      for (const r of decided) if (r.refusal) console.log(`  refused: ${r.file} ${r.refusal}`);
    }
  } else {
    await evalRefusals(modelCache({ threads: 2 }));
  }
}
