import { describe, expect, it } from 'vitest';
import { closerLookCandidates, cornersAlong, highOnCar, lineAcross } from '#vision/math/car-plates.ts';
import { type Box, boxQuad, type Quad } from '#vision/math/geometry.ts';

/** A sedan seen from the front three quarters: 300 x 150 at (40, 60). */
const CAR: Box = { x: 40, y: 60, w: 300, h: 150 };
const found = (box: Box, score: number, quad: Quad = boxQuad(box)) => ({ box, quad, score });

describe('highOnCar', () => {
  it('places a box on the windows (upper part of the car) high, one on the bumper or a boot lid low', () => {
    expect(highOnCar({ x: 180, y: 90, w: 34, h: 22 }, CAR)).toBe(true);
    expect(highOnCar({ x: 260, y: 160, w: 40, h: 20 }, CAR)).toBe(false);
    // A boot lid's plate seen from low lies just under the glass line.
    expect(highOnCar({ x: 200, y: 120, w: 50, h: 16 }, CAR)).toBe(false);
  });
});

describe('lineAcross', () => {
  const plate: Box = { x: 250, y: 150, w: 44, h: 24 };
  it("takes a text line across most of the plate's width", () => {
    const line = { x: 255, y: 153, w: 36, h: 18 };
    expect(lineAcross(plate, [{ x: 270, y: 156, w: 14, h: 8 }, line])).toEqual(line);
  });
  it("refuses a wheel hub's square region, a line over a fraction of the plate, or one beside it", () => {
    expect(lineAcross(plate, [{ x: 258, y: 148, w: 28, h: 30 }])).toBeUndefined();
    expect(lineAcross(plate, [{ x: 270, y: 156, w: 14, h: 8 }])).toBeUndefined();
    expect(lineAcross(plate, [{ x: 255, y: 185, w: 36, h: 18 }])).toBeUndefined();
    expect(lineAcross(plate, [])).toBeUndefined();
  });
});

describe('cornersAlong', () => {
  it('takes the outline that runs along the text line, not one tilted across it', () => {
    const steep: Quad = [
      { x: 245, y: 163 },
      { x: 291, y: 148 },
      { x: 296, y: 161 },
      { x: 250, y: 177 },
    ];
    const level: Quad = [
      { x: 251, y: 160 },
      { x: 295, y: 156 },
      { x: 299, y: 169 },
      { x: 254, y: 173 },
    ];
    expect(cornersAlong({ x: 257, y: 153, w: 38, h: 21 }, [steep, level])).toEqual(level);
    expect(cornersAlong({ x: 0, y: 0, w: 10, h: 5 }, [steep, level])).toBeUndefined();
  });
});

describe('closerLookCandidates', () => {
  const place = found({ x: 286, y: 167, w: 44, h: 29 }, 0.9);
  it("scores a place by the pass's and both close looks' scores, with the better look's corners", () => {
    const tilted: Quad = [
      { x: 284, y: 178 },
      { x: 326, y: 166 },
      { x: 328, y: 182 },
      { x: 286, y: 194 },
    ];
    const [c] = closerLookCandidates(
      [
        {
          place,
          direct: [found({ x: 287, y: 169, w: 40, h: 26 }, 0.3)],
          mirrored: [found({ x: 284, y: 166, w: 44, h: 28 }, 0.95, tilted)],
        },
      ],
      CAR,
    );
    expect(c!.scores).toEqual([0.9, 0.3, 0.95]);
    expect(c!.quad).toEqual(tilted);
    expect(c!.corners).toHaveLength(3);
  });
  it("keeps the other look's corners when the better look's quad is squeezed to a line", () => {
    const line: Quad = [
      { x: 285, y: 191 },
      { x: 325, y: 168 },
      { x: 326, y: 168 },
      { x: 285, y: 191 },
    ];
    const direct = found({ x: 287, y: 169, w: 40, h: 26 }, 0.3);
    const [c] = closerLookCandidates(
      [{ place, direct: [direct], mirrored: [found({ x: 285, y: 168, w: 41, h: 23 }, 0.9, line)] }],
      CAR,
    );
    expect(c!.quad).toEqual(direct.quad);
    expect(c!.scores[2]).toBe(0.9);
  });
  it('scores 0 for a look that did not find the place again, and leaves out a place as wide as the car', () => {
    const out = closerLookCandidates(
      [
        { place, direct: [found({ x: 40, y: 80, w: 40, h: 20 }, 0.9)], mirrored: [] },
        { place: found({ x: 60, y: 70, w: 200, h: 80 }, 0.8), direct: [], mirrored: [] },
      ],
      CAR,
    );
    expect(out).toHaveLength(1);
    expect(out[0]!.scores).toEqual([0.9, 0, 0]);
    expect(out[0]!.quad).toEqual(place.quad);
  });
});
