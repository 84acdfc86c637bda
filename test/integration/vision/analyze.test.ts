import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { UnclassifiableError } from '#core/errors.ts';
import type { JobParams } from '#core/jobs/job.ts';
import type { OperationResult } from '#core/ports.ts';
import type { Analysis } from '#vision/math/decision.ts';
import { PHOTO_TYPES, VIEWS } from '#vision/math/vocabulary.ts';
import { onnxOperationRunner } from '#vision/operation-runner.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const shared = path.resolve(repoRoot, '..', 'shared');
const evalDir = path.join(shared, 'eval');
const available = existsSync(path.join(evalDir, 'photos.csv')) && existsSync(path.join(shared, 'models'));
if (!available) {
  console.warn(`Skipping the real-photo analyze tests: ${shared} (models/ and eval/) is not there.`);
}

const rows = available
  ? (await readFile(path.join(evalDir, 'photos.csv'), 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const [file, photoType, view] = line.split(',');
        return { file: file!, photoType: photoType!, view: view || undefined };
      })
  : [];
// The first photo of each view and four interiors, in file order: not picked for passing. The head was
// fitted on these photos, so this checks the wiring and the output, not accuracy (npm run eval does that).
const sample = [
  ...VIEWS.map((v) => rows.find((r) => r.view === v)!),
  ...rows.filter((r) => r.photoType === 'interior').slice(0, 4),
].filter(Boolean);

const params: JobParams = {
  plateColor: '#141414',
  plateSmoothing: true,
  plateMaskOnly: false,
  background: null,
  backgroundFileKey: null,
  webhookUrl: null,
};
const runner = onnxOperationRunner();
const analyze = (source: Buffer) =>
  runner.run('analyze', { source, sourceSha256: 'test', params, background: null });

describe.skipIf(!available)('analyze on real photos (../shared)', () => {
  const results: { row: (typeof rows)[number]; result: OperationResult }[] = [];

  it('classifies listing photos with the spec shape', async () => {
    for (const row of sample) {
      const started = performance.now();
      const result = await analyze(await readFile(path.join(evalDir, row.file)));
      const ms = performance.now() - started;
      results.push({ row, result });
      const a = result.analysis as Analysis;
      console.log(
        `${row.file}: ${a.photo_type.value} ${a.photo_type.conf}` +
          `${a.view ? `, ${a.view.value} ${a.view.conf}` : ''} (labelled ${row.view ?? row.photoType}), ${ms.toFixed(0)} ms`,
      );
      expect(result.files).toEqual([]);
      expect(result.inferenceCached).toBe(false);
      expect(Object.keys(result.modelVersion).sort()).toEqual([
        'analyze_head',
        'car_detector',
        'feature_extractor',
        'plate_detector',
      ]);
      expect(PHOTO_TYPES).toContain(a.photo_type.value);
      expect(a.photo_type.label).toMatch(/^[A-Z]/);
      expect(Number.isInteger(a.photo_type.conf)).toBe(true);
      expect(a.photo_type.conf).toBeGreaterThanOrEqual(50);
      expect(a.photo_type.conf).toBeLessThanOrEqual(100);
      if (a.photo_type.value === 'exterior') {
        expect(VIEWS).toContain(a.view!.value);
        expect(Number.isInteger(a.view!.conf)).toBe(true);
        expect(a.detections.car ?? a.detections.truck ?? a.detections.bus).toBeDefined();
      } else {
        expect(a.view).toBeUndefined();
      }
      for (const found of [a.detections, a.background_detections]) {
        for (const [name, d] of Object.entries(found)) {
          expect(name).toMatch(/^[a-z_]+$/);
          expect(Number.isInteger(d.id) && Number.isInteger(d.conf)).toBe(true);
        }
      }
    }
    const typeRight = results.filter(
      ({ row, result }) => (result.analysis as Analysis).photo_type.value === row.photoType,
    ).length;
    const viewRight = results.filter(
      ({ row, result }) => row.view && (result.analysis as Analysis).view?.value === row.view,
    ).length;
    expect(typeRight).toBeGreaterThanOrEqual(sample.length - 1);
    expect(viewRight).toBeGreaterThanOrEqual(6);
  });

  it('finds the plate on a front photo as license_plate, id 1000', () => {
    const withPlate = results.filter(
      ({ result }) => (result.analysis as Analysis).detections.license_plate !== undefined,
    );
    expect(withPlate.length).toBeGreaterThan(0);
    expect((withPlate[0]!.result.analysis as Analysis).detections.license_plate!.id).toBe(1000);
  });

  it('refuses a blank grey picture with 800', async () => {
    const grey = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#808080' } })
      .jpeg()
      .toBuffer();
    const error = await analyze(grey).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnclassifiableError);
    expect((error as UnclassifiableError).code).toBe(800);
    expect((error as Error).message).toMatch(/neither a car nor an interior/);
  });

  it('answers the same for a photo and its mirror image, left and right swapped', async () => {
    const row = rows.find((r) => r.view === 'three_quarters_left')!;
    const source = await readFile(path.join(evalDir, row.file));
    const mirrored = await sharp(source).flop().jpeg({ quality: 95 }).toBuffer();
    const own = (await analyze(source)).analysis as Analysis;
    const flipped = (await analyze(mirrored)).analysis as Analysis;
    expect(own.view!.value).toMatch(/_left$/);
    expect(flipped.view!.value).toBe(own.view!.value.replace(/_left$/, '_right'));
  });
});

describe.skipIf(!available)('analyze on awkward inputs: an answer or a 4xx/800, never a 500', () => {
  /** The analysis, or the error's code when it is one the API maps below 500. */
  const outcome = async (source: Buffer): Promise<string> => {
    try {
      const a = (await analyze(source)).analysis as Analysis;
      return `${a.photo_type.value}${a.view ? ` ${a.view.value}` : ''}`;
    } catch (error) {
      const { status, code } = error as { status?: number; code?: number };
      expect(status, `${(error as Error).name}: ${(error as Error).message}`).toBeLessThan(500);
      return `error ${code}`;
    }
  };

  it('answers a car photo the same as its CMYK and 16-bit copies, and turned by EXIF', async () => {
    const row = rows.find((r) => r.view === 'front')!;
    const source = await readFile(path.join(evalDir, row.file));
    const own = await outcome(source);
    expect(own).toMatch(/^exterior/);
    expect(await outcome(await sharp(source).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer())).toBe(
      own,
    );
    expect(await outcome(await sharp(source).toColourspace('rgb16').png().toBuffer())).toBe(own);
    // Stored on its side with an EXIF orientation that turns it back upright.
    const sideways = await sharp(source)
      .rotate(-90)
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect(await outcome(sideways)).toMatch(/^exterior/);
    expect(await outcome(await sharp(source).greyscale().jpeg().toBuffer())).toMatch(/^exterior|^error 800/);
  });

  it('never fails with a 500 on blank, tiny, thin, panoramic or animated pictures', async () => {
    const row = rows.find((r) => r.view === 'side_left')!;
    const source = await readFile(path.join(evalDir, row.file));
    const flat = (width: number, height: number, background = '#808080') =>
      sharp({ create: { width, height, channels: 3, background } });
    const inputs: Record<string, Buffer> = {
      blank: await flat(640, 480).jpeg().toBuffer(),
      'blank white png': await flat(400, 300, '#ffffff').png().toBuffer(),
      tiny: await sharp(source).resize(32, 32, { fit: 'fill' }).jpeg().toBuffer(),
      'thin 2000x40': await sharp(source).resize(2000, 40, { fit: 'fill' }).jpeg().toBuffer(),
      'thin 40x1200': await sharp(source).resize(40, 1200, { fit: 'fill' }).png().toBuffer(),
      panorama: await sharp(source).resize(4000, 700, { fit: 'fill' }).jpeg().toBuffer(),
      'animated webp': await sharp([source, await sharp(source).flop().toBuffer()], {
        join: { animated: true },
      })
        .webp()
        .toBuffer(),
    };
    const answers: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(inputs)) answers[name] = await outcome(bytes);
    console.log(answers);
    expect(answers.blank).toBe('error 800');
    expect(answers['blank white png']).toBe('error 800');
  });
});
