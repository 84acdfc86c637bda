import { describe, expect, it } from 'vitest';
import type { Box } from '#vision/math/geometry.ts';
import {
  classifyAll,
  classifyFill,
  fillMargin,
  type PhotoFills,
  reportFills,
} from '../../eval/plate-fills.ts';

const PLATE: Box = { x: 100, y: 200, w: 100, h: 25 };
const OTHER: Box = { x: 400, y: 210, w: 60, h: 15 };
const SIGN: Box = { x: 10, y: 10, w: 120, h: 20 };

describe('plate-fills: what a fill lies on', () => {
  it('a fill hiding the labelled plate, or a part of it, is on the plate', () => {
    expect(classifyFill({ x: 98, y: 198, w: 104, h: 29 }, [PLATE], [], [])).toEqual({
      kind: 'plate',
      label: 0,
    });
    // The right half of the plate's row: mostly inside the label though it hides it only with its twin.
    expect(classifyFill({ x: 150, y: 202, w: 48, h: 20 }, [PLATE], [], [])).toEqual({
      kind: 'plate',
      label: 0,
    });
  });

  it('a fill over the plate and much of the bodywork around it is not on the plate', () => {
    const grille: Box = { x: 40, y: 150, w: 260, h: 120 };
    expect(classifyFill(grille, [PLATE], [], [])).toEqual({ kind: 'not looked at' });
    expect(
      classifyFill(grille, [PLATE], [], [{ box: grille, cause: 'grille/bodywork', note: 'rear grille' }]),
    ).toEqual({ kind: 'non-plate', cause: 'grille/bodywork', note: 'rear grille' });
  });

  it("another car's plate counts apart, and a non-plate label must match the fill's box", () => {
    expect(classifyFill({ x: 402, y: 211, w: 55, h: 14 }, [PLATE], [OTHER], [])).toEqual({
      kind: 'other plate',
    });
    const labelled = [{ box: SIGN, cause: 'sign' as const, note: '' }];
    expect(classifyFill({ x: 12, y: 11, w: 110, h: 18 }, [PLATE], [], labelled).kind).toBe('non-plate');
    expect(classifyFill({ x: 12, y: 11, w: 30, h: 18 }, [PLATE], [], labelled).kind).toBe('not looked at');
  });
});

describe('plate-fills: margins and the report', () => {
  it('measures the outward and inward steps of the fills in plate heights', () => {
    expect(fillMargin([{ x: 90, y: 200, w: 110, h: 30 }], PLATE)).toEqual({ beyond: 0.4, inset: 0 });
    expect(fillMargin([{ x: 110, y: 200, w: 90, h: 25 }], PLATE)).toEqual({ beyond: 0, inset: 0.4 });
  });

  it('counts a not-looked-at fill as non-plate and fails the target with it', () => {
    const photos: PhotoFills[] = Array.from({ length: 10 }, (_, i) => ({
      file: `p${i}.jpg`,
      source: 'eu',
      size: { width: 640, height: 480 },
      labels: [PLATE],
      fills: [{ box: PLATE, score: 0.9 }, ...(i === 0 ? [{ box: SIGN, score: 0.5 }] : [])],
      seconds: 1,
    }));
    const report = reportFills(photos, classifyAll(photos, [], []));
    expect(report).toContain('| eu | 10 | 11 | 10 | 0.000 (0) | 0.100 [');
    expect(report).toContain('**not met**');
    expect(report).toContain('| not looked at | 1 | eu p0.jpg [10,10,120,20] |');
  });
});
