/**
 * The background operations' interior check (issue 32 point 4): how often it refuses a photo, per source,
 * through the operation's own reader (`photoTypeReader`: the copy `analyze` looks at, its models, its
 * fitted head). Refusing is right on the listing interiors and wrong everywhere else.
 * The head was fitted on the listing photos and the street plates (eu, us, br), so those rows are
 * in-sample; `in`, `ro`, `davis` and `turntable` were never seen by any choice of the head or of this rule,
 * and are the figures to trust. Run alone: `node --import tsx test/eval/exterior-check.ts`; part of
 * `npm run eval` (PHOTO_JOBS_EVAL=exterior-check).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSource } from '#vision/image-io.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import { photoTypeReader } from '#vision/operations/analyze.ts';
import { wilson } from './analysis.ts';
import { type RefusalSource, sample } from './background-refusals.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');

const SIZES: Record<RefusalSource, number> = {
  ro: 30,
  in: 100,
  eu: 54,
  us: 111,
  br: 58,
  views: 200,
  davis: 77,
  turntable: 100,
  interiors: 200,
};
const UNSEEN: ReadonlySet<RefusalSource> = new Set(['in', 'ro', 'davis', 'turntable']);

export interface ExteriorCheckRow {
  readonly source: RefusalSource;
  readonly photos: number;
  readonly refused: number;
  readonly refusedFiles: readonly string[];
}

export async function evalExteriorCheck(models: ModelCache): Promise<ExteriorCheckRow[]> {
  const read = photoTypeReader(models);
  const rows = new Map<RefusalSource, { photos: number; refused: string[] }>();
  for (const { file, source } of await sample(SIZES)) {
    const type = await read(await openSource(await readFile(path.join(evalDir, file))));
    const row = rows.get(source) ?? { photos: 0, refused: [] };
    row.photos++;
    if (type?.value === 'interior') row.refused.push(file);
    rows.set(source, row);
  }
  return [...rows].map(([source, row]) => ({
    source,
    photos: row.photos,
    refused: row.refused.length,
    refusedFiles: row.refused,
  }));
}

export function exteriorCheckReport(rows: readonly ExteriorCheckRow[]): string {
  const lines = [
    'Interior check of the background operations: photos refused as interiors (802), per source',
    '| source | seen by the head | photos | refused | share (95% CI) | should be |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const [lo, hi] = wilson(row.refused, row.photos);
    const share = `${(row.refused / row.photos).toFixed(3)} (${lo.toFixed(3)}-${hi.toFixed(3)})`;
    const seen = UNSEEN.has(row.source) ? 'no' : 'yes';
    const target = row.source === 'interiors' ? 'all' : 'none';
    lines.push(`| ${row.source} | ${seen} | ${row.photos} | ${row.refused} | ${share} | ${target} |`);
  }
  const wrong = rows.filter((r) => r.source !== 'interiors').flatMap((r) => r.refusedFiles);
  if (wrong.length > 0) lines.push('', `Car photos refused: ${wrong.join(', ')}`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  console.log(exteriorCheckReport(await evalExteriorCheck(modelCache({}))));
}
