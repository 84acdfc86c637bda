import { describe, expect, it } from 'vitest';
import { InternalError } from '#core/errors.ts';
import {
  COCO_CLASSES,
  cutByTile,
  decodeNanodet,
  distinctVehicles,
  FINE_TILE_MIN_SIDE,
  NANODET_CLASS_COUNT,
  NANODET_STRIDES,
  nanodetLetterbox,
  nanodetRowCounts,
  TILE_MIN_SIDE,
  TILE_SKIP_WIDTH,
  vehicleTiles,
} from '#vision/math/nanodet.ts';

/** Box logits that put all the weight on one bin per side: distances (in bins) left, top, right, bottom. */
function sideLogits(bins: [number, number, number, number]): number[] {
  return bins.flatMap((b) => Array.from({ length: 8 }, (_, k) => (k === b ? 20 : -20)));
}

interface Cell {
  level: number;
  row: number;
  col: number;
  scores: Record<number, number>;
  bins: [number, number, number, number];
}

/** Outputs where every anchor scores 0 except the given cells. */
function outputs(cells: Cell[]) {
  const rows = nanodetRowCounts();
  const scores = rows.map((n) => new Float32Array(n * NANODET_CLASS_COUNT));
  const boxes = rows.map((n) => new Float32Array(n * 32));
  for (const cell of cells) {
    const side = Math.ceil(416 / NANODET_STRIDES[cell.level]!);
    const r = cell.row * side + cell.col;
    for (const [c, s] of Object.entries(cell.scores))
      scores[cell.level]![r * NANODET_CLASS_COUNT + Number(c)] = s;
    boxes[cell.level]!.set(sideLogits(cell.bins), r * 32);
  }
  return { scores, boxes };
}

describe('nanodetLetterbox', () => {
  it('fits the long side to 416 and keeps the aspect', () => {
    expect(nanodetLetterbox({ width: 4000, height: 3000 })).toEqual({
      scale: 0.104,
      width: 416,
      height: 312,
    });
    expect(nanodetLetterbox({ width: 250, height: 380 })).toMatchObject({ width: 274, height: 416 });
  });
});

describe('decodeNanodet', () => {
  it('has the COCO classes in model order and the row counts of the 416 input', () => {
    expect(COCO_CLASSES).toHaveLength(80);
    expect([COCO_CLASSES[2], COCO_CLASSES[5], COCO_CLASSES[7]]).toEqual(['car', 'bus', 'truck']);
    expect(nanodetRowCounts()).toEqual([2704, 676, 169]);
  });

  it('decodes DFL distances around the cell’s centre, times the stride', () => {
    // Stride 32, cell (row 4, col 6): prior at (192 + 15.5, 128 + 15.5), as opencv_zoo's demo decodes this
    // model file; sides 2, 1, 3, 2 bins.
    const out = outputs([{ level: 2, row: 4, col: 6, scores: { 2: 0.8 }, bins: [2, 1, 3, 2] }]);
    const [car] = decodeNanodet(out);
    expect(car!.classId).toBe(2);
    expect(car!.score).toBeCloseTo(0.8, 6);
    expect(car!.box.x).toBeCloseTo(207.5 - 64, 3);
    expect(car!.box.y).toBeCloseTo(143.5 - 32, 3);
    expect(car!.box.w).toBeCloseTo(64 + 96, 3);
    expect(car!.box.h).toBeCloseTo(32 + 64, 3);
  });

  it('decodes around the cell’s corner when asked, as the analyze head was fitted', () => {
    const out = outputs([{ level: 2, row: 4, col: 6, scores: { 2: 0.8 }, bins: [2, 1, 3, 2] }]);
    const [car] = decodeNanodet(out, { priors: 'corner' });
    expect([car!.box.x, car!.box.y]).toEqual([192 - 64, 128 - 32]);
  });

  it('takes the expectation of the bin softmax, not its argmax', () => {
    const out = outputs([{ level: 0, row: 10, col: 10, scores: { 0: 0.9 }, bins: [0, 0, 0, 0] }]);
    // Left side: equal logits on bins 1 and 2 -> 1.5 bins.
    const left = Array.from({ length: 8 }, (_, k) => (k === 1 || k === 2 ? 10 : -30));
    out.boxes[0]!.set(left, (10 * 52 + 10) * 32);
    const [person] = decodeNanodet(out);
    expect(person!.box.x).toBeCloseTo(83.5 - 1.5 * 8, 3);
  });

  it('maps boxes back to the source with the letterbox scale and clips them', () => {
    const out = outputs([{ level: 2, row: 1, col: 1, scores: { 7: 0.6 }, bins: [7, 7, 2, 2] }]);
    const [truck] = decodeNanodet(out, { scale: 0.5, source: { width: 600, height: 400 } });
    // Prior (47.5, 47.5): left 47.5 - 224 < 0 -> clipped to 0; right (47.5 + 64) / 0.5 = 223.
    expect(truck!.box).toEqual({ x: 0, y: 0, w: 223, h: 223 });
  });

  it('drops scores under the threshold and suppresses overlaps per class only', () => {
    const out = outputs([
      { level: 1, row: 10, col: 10, scores: { 2: 0.7, 7: 0.5 }, bins: [3, 3, 3, 3] },
      { level: 1, row: 10, col: 11, scores: { 2: 0.6 }, bins: [3, 3, 3, 3] },
      { level: 1, row: 20, col: 20, scores: { 2: 0.2 }, bins: [3, 3, 3, 3] },
    ]);
    const found = decodeNanodet(out);
    expect(found.map((d) => [d.classId, d.score.toFixed(1)])).toEqual([
      [2, '0.7'],
      [7, '0.5'],
    ]);
    expect(decodeNanodet(out, { scoreThreshold: 0.1 })).toHaveLength(3);
  });

  it('refuses outputs that do not match the 416 input', () => {
    const out = outputs([]);
    expect(() => decodeNanodet({ scores: out.scores.slice(0, 2), boxes: out.boxes })).toThrow(InternalError);
    expect(() =>
      decodeNanodet({ scores: [new Float32Array(80), ...out.scores.slice(1)], boxes: out.boxes }),
    ).toThrow(/does not match/);
  });
});

describe('vehicleTiles', () => {
  it('gives no tiles under TILE_MIN_SIDE or beside a vehicle TILE_SKIP_WIDTH of the width, else four that cover the photo', () => {
    expect(vehicleTiles({ width: TILE_MIN_SIDE - 1, height: 900 })).toEqual([]);
    const photo = { width: 2400, height: 1800 };
    const tiles = vehicleTiles(photo);
    expect(tiles).toHaveLength(4);
    for (const t of tiles) {
      expect(t.w).toBeCloseTo(1320);
      expect(t.h).toBeCloseTo(990);
      expect(t.x + t.w).toBeLessThanOrEqual(photo.width + 1e-9);
      expect(t.y + t.h).toBeLessThanOrEqual(photo.height + 1e-9);
    }
    const wide = TILE_SKIP_WIDTH * photo.width;
    expect(vehicleTiles(photo, [{ x: 300, y: 300, w: wide, h: 900 }])).toEqual([]);
    expect(vehicleTiles(photo, [{ x: 300, y: 300, w: wide - 1, h: 900 }])).toHaveLength(4);
    const covered = (x: number, y: number) =>
      tiles.some((t) => x >= t.x && x <= t.x + t.w && y >= t.y && y <= t.y + t.h);
    for (const [x, y] of [
      [0, 0],
      [1200, 900],
      [2399, 1799],
      [1140, 1740],
    ] as const)
      expect(covered(x, y)).toBe(true);
  });

  it('adds 3x3 finer tiles from FINE_TILE_MIN_SIDE, for vehicles up to 600 px, one of which holds any car 500 px wide whole', () => {
    expect(vehicleTiles({ width: FINE_TILE_MIN_SIDE - 1, height: 2000 })).toHaveLength(4);
    const photo = { width: 4000, height: 3000 };
    const tiles = vehicleTiles(photo);
    expect(tiles).toHaveLength(13);
    const fine = tiles.slice(4);
    for (const t of fine) expect(416 / Math.max(t.w, t.h)).toBeLessThanOrEqual(0.25);
    // What fills most of a fine tile is left to the 2x2 tiles, which see it at 110 px or more.
    for (const t of tiles.slice(0, 4)) expect(t.maxVehicleWidth).toBe(photo.width);
    for (const t of fine) expect(t.maxVehicleWidth).toBeCloseTo(600);
    // A car 500x300 anywhere in the photo lies whole, not cut, in at least one fine tile.
    for (let x = 0; x + 500 <= photo.width; x += 125)
      for (let y = 0; y + 300 <= photo.height; y += 150) {
        const car = { x, y, w: 500, h: 300 };
        const whole = fine.some(
          (t) =>
            car.x >= t.x &&
            car.y >= t.y &&
            car.x + car.w <= t.x + t.w &&
            car.y + car.h <= t.y + t.h &&
            !cutByTile(car, t, photo),
        );
        expect(whole, `${x},${y}`).toBe(true);
      }
  });
});

describe('cutByTile', () => {
  const photo = { width: 4000, height: 3000 };
  const topLeft = { x: 0, y: 0, w: 2200, h: 1650 };
  it('cuts a box that reaches an edge of the tile inside the photo', () => {
    expect(cutByTile({ x: 2000, y: 500, w: 199, h: 100 }, topLeft, photo)).toBe(true);
    expect(cutByTile({ x: 500, y: 1600, w: 100, h: 50 }, topLeft, photo)).toBe(true);
  });
  it('keeps a box inside the tile, or one on an edge the tile shares with the photo', () => {
    expect(cutByTile({ x: 1000, y: 800, w: 300, h: 200 }, topLeft, photo)).toBe(false);
    expect(cutByTile({ x: 0, y: 0, w: 300, h: 200 }, topLeft, photo)).toBe(false);
    const bottomRight = { x: 1800, y: 1350, w: 2200, h: 1650 };
    expect(cutByTile({ x: 3700, y: 2800, w: 300, h: 200 }, bottomRight, photo)).toBe(false);
    expect(cutByTile({ x: 1800, y: 2000, w: 300, h: 200 }, bottomRight, photo)).toBe(true);
  });
});

describe('distinctVehicles', () => {
  it('keeps the largest of boxes on one vehicle, largest first, at most max', () => {
    const car = { x: 100, y: 100, w: 400, h: 200 };
    const truck = { x: 110, y: 95, w: 420, h: 210 };
    const far = { x: 1000, y: 100, w: 100, h: 50 };
    const near = { x: 2000, y: 100, w: 600, h: 300 };
    expect(distinctVehicles([far, car, truck, near], 10)).toEqual([near, truck, far]);
    expect(distinctVehicles([far, car, truck, near], 2)).toEqual([near, truck]);
  });
});
