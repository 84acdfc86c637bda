import { describe, expect, it } from 'vitest';
import {
  FRAME_SIZE,
  firstBelow,
  frameFit,
  holdsDownTo,
  ladderOrder,
  ladderReport,
  pastePosition,
  placeBox,
  type RungResult,
  rungSize,
  tallyRungs,
  uncovered,
} from '../../eval/plate-ladder.ts';

const results = (rung: number, plates: number, found: number, source = 'eu'): RungResult[] =>
  Array.from({ length: plates }, (_, i) => ({
    rung,
    source,
    frame: i % 2 ? 'street' : 'car park',
    view: i < 2 ? ('close-up' as const) : ('scene' as const),
    found: i < found,
    offLabels: i === 0 ? 2 : 0,
  }));

describe('the scale ladder’s frames', () => {
  it('a 4:3 photo is enlarged to 4000x3000 whole, its plates with it', () => {
    const fit = frameFit({ width: 2048, height: 1536 });
    expect(fit).toMatchObject({ resized: FRAME_SIZE, left: 0, top: 0 });
    expect(placeBox({ x: 848, y: 954, w: 343, h: 79 }, fit.placement)).toEqual({
      x: 1656.25,
      y: 1863.28125,
      w: 669.921875,
      h: 154.296875,
    });
  });

  it('a wider photo covers the height and loses equal margins left and right', () => {
    const fit = frameFit({ width: 1798, height: 1084 });
    expect(fit.resized).toEqual({ width: 4976, height: 3000 });
    expect([fit.left, fit.top]).toEqual([488, 0]);
    // The photo's centre stays the frame's centre, within the rounding of one pixel.
    const centre = placeBox({ x: 899, y: 542, w: 0, h: 0 }, fit.placement);
    expect(centre.x).toBeCloseTo(2000, 0);
    expect(centre.y).toBeCloseTo(1500, 6);
  });
});

describe('the scale ladder’s rungs', () => {
  it('shrinks the photo so that the label is the rung’s height, and never enlarges it', () => {
    expect(rungSize({ width: 1000, height: 750 }, { x: 0, y: 0, w: 200, h: 50 }, 25)).toEqual({
      width: 500,
      height: 375,
    });
    expect(rungSize({ width: 1000, height: 750 }, { x: 0, y: 0, w: 200, h: 50 }, 50)).toEqual({
      width: 1000,
      height: 750,
    });
    expect(rungSize({ width: 1000, height: 750 }, { x: 0, y: 0, w: 200, h: 50 }, 60)).toBeUndefined();
  });

  it('pastes a small photo centred a quarter of the height above the bottom, inside the frame', () => {
    const at = pastePosition(FRAME_SIZE, { width: 300, height: 200 }, [], 0);
    expect(at).toEqual({ x: 250, y: 2150 });
    expect(pastePosition(FRAME_SIZE, { width: 300, height: 200 }, [], 4)).toEqual({ x: 3450, y: 2150 });
  });

  it('keeps a paste in the lower half, and one taller than that half on the bottom edge', () => {
    expect(pastePosition(FRAME_SIZE, { width: 1200, height: 1400 }, [], 0).y).toBe(1550);
    expect(pastePosition(FRAME_SIZE, { width: 1200, height: 1600 }, [], 0)).toEqual({ x: 0, y: 1400 });
  });

  it('moves to the next place that leaves the frame’s plates in sight, else covers the least of them', () => {
    const plate = { x: 200, y: 2200, w: 100, h: 40 };
    expect(pastePosition(FRAME_SIZE, { width: 300, height: 200 }, [plate], 0)).toEqual({ x: 1050, y: 2150 });
    const wide = { width: 3900, height: 200 };
    const small = { x: 3950, y: 2200, w: 40, h: 20 };
    const large = { x: 1000, y: 2200, w: 200, h: 40 };
    // Every place covers the large plate; the left one leaves the small one at the right edge in sight.
    expect(pastePosition(FRAME_SIZE, wide, [large, small], 3)).toEqual({ x: 0, y: 2150 });
    expect(uncovered([large, small], { x: 0, y: 2150, w: 3900, h: 200 })).toEqual([small]);
  });
});

describe('the scale ladder’s order', () => {
  const photos = ['eu', 'ro'].flatMap((source) =>
    Array.from({ length: 6 }, (_, i) => ({ source, file: `/x/${source}-${i}.jpg` })),
  );

  it('takes the sources in turn, each in a fixed order that is not its list’s', () => {
    const order = ladderOrder(photos);
    expect(order).toHaveLength(12);
    expect(order.map((p) => p.source)).toEqual(Array.from({ length: 12 }, (_, i) => (i % 2 ? 'ro' : 'eu')));
    const eachReversed = ['eu', 'ro'].flatMap((s) => photos.filter((p) => p.source === s).reverse());
    expect(ladderOrder(eachReversed)).toEqual(order);
    expect(order.filter((p) => p.source === 'eu')).not.toEqual(photos.filter((p) => p.source === 'eu'));
  });

  it('a sample is the first part of the full order', () => {
    expect(ladderOrder(photos, 2)).toEqual(ladderOrder(photos).slice(0, 4));
  });
});

describe('the scale ladder’s figures', () => {
  it('counts plates, finds and fills per rung, largest rung first, rungs without plates left out', () => {
    const tallies = tallyRungs([...results(25, 10, 7), ...results(40, 4, 4, 'us'), ...results(40, 1, 0)]);
    expect(tallies.map((t) => [t.rung, t.plates, t.found, t.offLabels, t.withOffLabels])).toEqual([
      [40, 5, 4, 4, 2],
      [25, 10, 7, 2, 1],
    ]);
    expect(tallies[0]!.bySource.get('us')).toEqual({ plates: 4, found: 4 });
    expect(tallies[1]!.byFrame.get('car park')).toEqual({ plates: 5, found: 4 });
    expect(tallies[1]!.byView.get('close-up')).toEqual({ plates: 2, found: 2 });
  });

  it('the ladder holds down to the last rung of an unbroken run at 0.9 or more', () => {
    const tallies = tallyRungs([
      ...results(60, 20, 19),
      ...results(40, 20, 17),
      ...results(25, 20, 19),
      ...results(15, 20, 2),
    ]);
    expect(holdsDownTo(tallies)).toBe(60);
    expect(firstBelow(tallies)).toBe(40);
    expect(holdsDownTo(tallyRungs(results(60, 10, 8)))).toBeUndefined();
    expect(firstBelow(tallyRungs(results(10, 10, 9)))).toBeUndefined();
  });

  it('reports recall with its Wilson interval and where the ladder breaks', () => {
    const report = ladderReport(tallyRungs([...results(40, 20, 20), ...results(25, 20, 10)]));
    expect(report).toContain('| 40 px | 20 | 20 | 1.000 | [0.839, 1.000] |');
    expect(report).toContain('| 25 px | 20 | 10 | 0.500 | [0.299, 0.701] |');
    expect(report).toContain('down to: 40 px; first rung below 0.9: 25 px.');
  });
});
