/**
 * `npm run eval`: how the models do on the labelled real photos of ../shared/eval (see its README).
 * 1. Plates (plates.csv): per region, recall (a detected quad's bounding box with IoU >= 0.5 against the
 *    labelled box), false fills per image (detections matching no label), and the share of the labelled
 *    box covered by the fill (hidePlates with a test colour, service defaults otherwise).
 * 2. analyze: held-out figures per source with 95% intervals and the 800 rate per source
 *    (test/eval/analysis.ts).
 * 3. background: a contact sheet of results to look at, when the operation exists in this build.
 * Skips with a message when ../shared/eval is not there.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { PlateNotFoundError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import type { OperationResult } from '#core/use-cases/run-inference.ts';
import { readPhotos } from '#tools/analyze-samples.ts';
import { type Box, boxIoU } from '#vision/math/geometry.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import type { OperationInput } from '#vision/operation-input.ts';
import { hidePlates } from '#vision/operations/hide-plates.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import { evalAnalysis } from './analysis.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const outDir = path.join(repoRoot, '.cache', 'eval');
const FILL = [255, 0, 255] as const;
/** RGB distance under which a pixel counts as the fill after the JPEG round trip. */
const NEAR_FILL = 48;

const params: JobParams = {
  plateColor: '#ff00ff',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}

async function evalPlates(models: ModelCache) {
  const detector = await plateDetector(models);
  const rows = (await readFile(path.join(evalDir, 'plates.csv'), 'utf8'))
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [file, region, x, y, w, h] = line.split(',');
      return {
        file: file!,
        region: region!,
        box: { x: Number(x), y: Number(y), w: Number(w), h: Number(h) },
      };
    });
  const byRegion = new Map<string, { images: number; hits: number; falseFills: number; covered: number }>();
  for (const row of rows) {
    const source = await readFile(path.join(evalDir, row.file));
    let plates: { box: Box }[] = [];
    let covered = 0;
    try {
      const result = await hidePlates({ detector }, source, params);
      plates = result.plates;
      covered = await coverage(result.image, row.box);
    } catch (error) {
      if (!(error instanceof PlateNotFoundError)) throw error;
    }
    const hit = plates.some((p) => boxIoU(p.box, row.box) >= 0.5);
    const r = byRegion.get(row.region) ?? { images: 0, hits: 0, falseFills: 0, covered: 0 };
    r.images++;
    if (hit) r.hits++;
    r.falseFills += plates.filter((p) => boxIoU(p.box, row.box) < 0.5).length;
    r.covered += covered;
    byRegion.set(row.region, r);
  }
  const total = [...byRegion.values()].reduce(
    (t, r) => ({
      images: t.images + r.images,
      hits: t.hits + r.hits,
      falseFills: t.falseFills + r.falseFills,
      covered: t.covered + r.covered,
    }),
    { images: 0, hits: 0, falseFills: 0, covered: 0 },
  );
  const line = (name: string, r: typeof total) => [
    name,
    r.images,
    (r.hits / r.images).toFixed(3),
    (r.falseFills / r.images).toFixed(2),
    pct(r.covered / r.images),
  ];
  console.log(`\nPlates (${detector.modelVersion}; hit = IoU >= 0.5 with the labelled box)`);
  console.log(
    table(
      ['region', 'images', 'recall', 'false fills/image', 'label box filled'],
      [...[...byRegion.entries()].map(([name, r]) => line(name, r)), line('all', total)],
    ),
  );
}

/** Share of the labelled box whose pixels are the fill colour after encoding. */
async function coverage(image: Buffer, box: Box): Promise<number> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  let inside = 0;
  let filled = 0;
  for (let y = Math.max(0, box.y); y < Math.min(info.height, box.y + box.h); y++) {
    for (let x = Math.max(0, box.x); x < Math.min(info.width, box.x + box.w); x++) {
      const o = (y * info.width + x) * info.channels;
      inside++;
      if (Math.hypot(data[o]! - FILL[0], data[o + 1]! - FILL[1], data[o + 2]! - FILL[2]) < NEAR_FILL)
        filled++;
    }
  }
  return inside > 0 ? filled / inside : 0;
}

type OperationImpl = (models: ModelCache, input: OperationInput) => Promise<OperationResult>;

async function backgroundSheet(models: ModelCache) {
  // Imported by name at run time: the operation may not exist in this build yet.
  const specifier = '#vision/operations/background.ts';
  const module = (await import(specifier).catch(() => null)) as {
    backgroundOperation?: OperationImpl;
  } | null;
  if (!module?.backgroundOperation) {
    console.log('\nbackground: the operation is not in this build; no contact sheet.');
    return;
  }
  const photos = (await readPhotos(evalDir)).filter(
    (p) => p.source === 'listing' && p.photoType === 'exterior',
  );
  // Two photos per view, spread through the list, then plate photos of each region.
  const picked = [
    ...photos.filter((_, i) => i % 12 === 0).map((p) => p.file),
    'plates/eu/eu1.jpg',
    'plates/us/us1.jpg',
    'plates/br/br1.jpg',
  ].filter((f) => existsSync(path.join(evalDir, f)));
  const tile = { width: 320, height: 240 };
  const tiles: Buffer[] = [];
  for (const file of picked) {
    const source = await readFile(path.join(evalDir, file));
    const toTile = (img: Buffer) =>
      sharp(img).resize(tile.width, tile.height, { fit: 'contain', background: '#000' }).png().toBuffer();
    tiles.push(await toTile(source));
    try {
      const result = await module.backgroundOperation(models, {
        source,
        sourceSha256: file,
        params,
        background: null,
      });
      tiles.push(await toTile(result.files.find((f) => f.roles.includes('url'))!.bytes));
    } catch (error) {
      const text = `<svg width="${tile.width}" height="${tile.height}"><rect width="100%" height="100%" fill="#400"/><text x="10" y="120" fill="#fff" font-size="14">${(error as Error).name}</text></svg>`;
      tiles.push(await sharp(Buffer.from(text)).png().toBuffer());
    }
  }
  const columns = 4;
  const sheet = await sharp({
    create: {
      width: columns * tile.width,
      height: Math.ceil(tiles.length / columns) * tile.height,
      channels: 3,
      background: '#000',
    },
  })
    .composite(
      tiles.map((input, i) => ({
        input,
        left: (i % columns) * tile.width,
        top: Math.floor(i / columns) * tile.height,
      })),
    )
    .jpeg({ quality: 85 })
    .toBuffer();
  await mkdir(outDir, { recursive: true });
  const file = path.join(outDir, 'background-contact-sheet.jpg');
  await writeFile(file, sheet);
  console.log(
    `\nbackground: ${picked.length} photos, source | result pairs, written to ${path.relative(repoRoot, file)}`,
  );
}

if (!existsSync(path.join(evalDir, 'photos.csv')) || !existsSync(path.join(evalDir, 'plates.csv'))) {
  console.log(`No evaluation data at ${evalDir} (see ../shared/eval/README.md): nothing to evaluate.`);
} else {
  const models = modelCache({});
  await evalPlates(models);
  await evalAnalysis(evalDir, path.join(repoRoot, 'eval-out'));
  await backgroundSheet(models);
}
