import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { modelCache } from '#vision/models.ts';
import { plateDetector } from '#vision/operations/plate.ts';
import type { PlateDetector } from '#vision/plate-detector.ts';
import { composite, judge, ladderSetup } from '../../eval/plate-ladder.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const evalDir = path.resolve(repoRoot, '..', 'shared', 'eval');
const available = existsSync(path.join(evalDir, 'plates.csv'));

/**
 * The first three plates of the ladder's order (`ladderOrder`: one each of eu, us, br), each in the frame
 * and place the eval gives it (its turn): the eval's first composites at 25 px. The us plate was a miss
 * while the finder read inside the three largest vehicles only: its car is the fourth largest of the car
 * park's; every vehicle is read now (`CAR_LOOKS`). The br plate of turn 7 was a miss while NanoDet searched
 * 2x2 tiles only: its car, 380 px wide, is boxed in a 3x3 tile (`FINE_TILE_MIN_SIDE`).
 */
const SLICE = [
  { file: 'plates/eu/eu9.jpg', turn: 0, found: true },
  { file: 'plates/us/wts-lg-000152.jpg', turn: 1, found: true },
  { file: 'plates/br/NTV0498.jpg', turn: 2, found: true },
  { file: 'plates/br/PJJ1406.jpg', turn: 7, found: true },
];
const RUNG = 25;

describe.skipIf(!available)(`the scale ladder's fast slice: plates ${RUNG} px high in 4000x3000`, () => {
  let detector: PlateDetector;
  let setup: Awaited<ReturnType<typeof ladderSetup>>;
  beforeAll(async () => {
    detector = await plateDetector(modelCache({ threads: 1 }));
    setup = await ladderSetup(evalDir);
  });

  it.each(SLICE)('$file: found $found', async ({ file, turn, found }) => {
    const { every, others, frames } = setup;
    const photo = every.find((p) => p.file === path.join(evalDir, file))!;
    const c = await composite(frames[turn % frames.length]!, photo, 0, RUNG, turn, others.get(photo.file));
    expect(c?.plate.h).toBeCloseTo(RUNG, 0);
    const judged = await judge(detector, c!);
    expect(judged.found).toBe(found);
    expect(judged.offLabels).toBe(0);
  });
});
