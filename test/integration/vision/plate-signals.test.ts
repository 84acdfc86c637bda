import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlateNotFoundError } from '#core/errors.ts';
import { openSource } from '#vision/image-io.ts';
import { boxIoU } from '#vision/math/geometry.ts';
import { PLATE_RULE, selectPlates } from '#vision/math/plate-evidence.ts';
import { modelCache } from '#vision/models.ts';
import { hidePlates } from '#vision/operations/hide-plates.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import type { PlateDetector } from '#vision/plate-detector.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const extra = path.join(evalDir, 'extra');
const available = existsSync(path.join(extra, 'plates-ro.csv'));

/** A Romanian dashcam frame (not in the photos the detector's rule was first chosen on). */
const RO_FRAME = { file: 'plates-ro/ro-0005.jpg', box: { x: 649.6, y: 337.4, w: 65.4, h: 17.7 } };
const NO_CAR = 'interiors/LABELED(in)audi_a4__595804083s.jpg';
const params = { plateColor: '#ff00ff', plateSmoothing: true, plateMaskOnly: false };

describe.skipIf(!available)('plates found by either signal (LPD-YuNet pyramid + PP-OCRv4 text)', () => {
  let detector: PlateDetector;
  beforeAll(async () => {
    detector = await plateDetector(modelCache({ threads: 1 }));
  });

  it('fills the plate of a car ahead in a dashcam frame', async () => {
    const result = await hidePlates({ detector }, await readFile(path.join(extra, RO_FRAME.file)), params);
    expect(Math.max(...result.plates.map((p) => boxIoU(p.box, RO_FRAME.box)))).toBeGreaterThanOrEqual(0.5);
    expect(detector.modelVersion).toMatch(/lpd-yunet.*\+ppocr-v4-det.*\+ppocr-v4-rec/);
  });

  it('reads the text of the proposals and decides as selectPlates does with every reading taken', async () => {
    const levels = await openSource(await readFile(path.join(extra, RO_FRAME.file)));
    const all = await detector.candidates(levels, { readText: 'all' });
    expect(all.some((c) => c.text !== undefined)).toBe(true);
    const found = await detector.find(levels);
    expect(selectPlates(all, levels, PLATE_RULE).map((c) => c.box)).toEqual(found.map((p) => p.box));
  });

  it('fills nothing on a photo without a car, nor on blank or degenerate pictures (803)', async () => {
    const flat = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: '#808080' } });
    const pictures = {
      interior: await readFile(path.join(evalDir, NO_CAR)),
      blank: await flat(640, 480).jpeg().toBuffer(),
      'thin 2000x12': await flat(2000, 12).jpeg().toBuffer(),
      tiny: await flat(8, 8).png().toBuffer(),
    };
    for (const [name, bytes] of Object.entries(pictures)) {
      const outcome = await hidePlates({ detector }, bytes, params).then(
        (r) => r.plates.length,
        (error) => (error instanceof PlateNotFoundError ? 'PlateNotFoundError' : error),
      );
      expect([name, outcome]).toEqual([name, 'PlateNotFoundError']);
    }
  });
});
