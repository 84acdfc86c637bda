/**
 * `npm run eval`: how the models do on the labelled real photos of ../shared/eval (see its README).
 * 1. Plates (plates.csv): per region, held-out recall, false fills and wheel-like fills with intervals
 *    (test/eval/plates.ts).
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
import type { JobParams } from '#core/jobs/job.ts';
import type { OperationResult } from '#core/use-cases/run-inference.ts';
import { readPhotos } from '#tools/analyze-samples.ts';
import { type ModelCache, modelCache } from '#vision/models.ts';
import type { OperationInput } from '#vision/operation-input.ts';
import { evalAnalysis } from './analysis.ts';
import { evalPlates } from './plates.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const outDir = path.join(repoRoot, '.cache', 'eval');

const params: JobParams = {
  plateColor: '#ff00ff',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: 'studio',
  backgroundFileKey: null,
  webhookUrl: null,
};

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
  await evalPlates(evalDir, models);
  await evalAnalysis(evalDir, path.join(repoRoot, 'eval-out'));
  await backgroundSheet(models);
}
