import { describe, expect, it } from 'vitest';
import { boxQuad } from '#vision/math/geometry.ts';
import { reportedPlates } from '#vision/math/plate-report.ts';

const plate = { quad: boxQuad({ x: 100, y: 200, w: 60, h: 15 }), score: 0.8 };

describe('the plates a result reports', () => {
  it('are the photo’s corners when the result is the photo, clockwise from top-left', () => {
    const size = { width: 400, height: 300 };
    expect(reportedPlates([plate], { drawn: size, encoded: size })).toEqual([
      {
        corners: [
          [100, 200],
          [160, 200],
          [160, 215],
          [100, 215],
        ],
        score: 0.8,
      },
    ]);
  });

  it('move with the car on a centred canvas, then shrink with max_width', () => {
    const [found] = reportedPlates([plate], {
      placement: { scale: 2, dx: -50, dy: 10 },
      drawn: { width: 800, height: 600 },
      encoded: { width: 400, height: 300 },
    });
    // (100, 200) lands at (150, 410) on the canvas, then half of it.
    expect(found!.corners[0]).toEqual([75, 205]);
    expect(found!.corners[2]).toEqual([135, 220]);
  });

  it('score a plate its text alone confirmed by its reading, and list the surest first', () => {
    const textOnly = { quad: boxQuad({ x: 10, y: 10, w: 40, h: 10 }), score: 0, text: { score: 0.93 } };
    const size = { width: 400, height: 300 };
    const found = reportedPlates([plate, textOnly], { drawn: size, encoded: size });
    expect(found.map((p) => p.score)).toEqual([0.93, 0.8]);
  });
});
