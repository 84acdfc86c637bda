import { describe, expect, it } from 'vitest';
import {
  boxIoU,
  convexHull,
  nonMaxSuppression,
  orderCornersClockwise,
  polygonArea,
  quadBoundingBox,
  scaleQuad,
  signedPolygonArea,
} from '#vision/math/geometry.ts';

const p = (x: number, y: number) => ({ x, y });

describe('boxIoU', () => {
  it('is 1 for identical boxes and 0 for disjoint or touching ones', () => {
    const a = { x: 10, y: 10, w: 20, h: 10 };
    expect(boxIoU(a, a)).toBe(1);
    expect(boxIoU(a, { x: 100, y: 100, w: 5, h: 5 })).toBe(0);
    expect(boxIoU(a, { x: 30, y: 10, w: 20, h: 10 })).toBe(0);
  });

  it('is intersection over union for partial overlaps', () => {
    // Half of each box overlaps: 100 / (200 + 200 - 100).
    expect(boxIoU({ x: 0, y: 0, w: 20, h: 10 }, { x: 10, y: 0, w: 20, h: 10 })).toBeCloseTo(1 / 3);
    // One inside the other: the small area over the large one.
    expect(boxIoU({ x: 0, y: 0, w: 10, h: 10 }, { x: 2, y: 2, w: 5, h: 5 })).toBeCloseTo(0.25);
  });
});

describe('quadBoundingBox', () => {
  it('spans the extreme corners of a tilted quad', () => {
    expect(quadBoundingBox([p(12, 5), p(40, 9), p(38, 20), p(10, 16)])).toEqual({
      x: 10,
      y: 5,
      w: 30,
      h: 15,
    });
  });
});

describe('polygonArea', () => {
  it('is the shoelace area, positive for clockwise-on-screen vertices', () => {
    const square = [p(0, 0), p(4, 0), p(4, 3), p(0, 3)];
    expect(signedPolygonArea(square)).toBe(12);
    expect(signedPolygonArea([...square].reverse())).toBe(-12);
    expect(polygonArea([...square].reverse())).toBe(12);
  });
});

describe('orderCornersClockwise', () => {
  it('orders shuffled corners top-left, top-right, bottom-right, bottom-left', () => {
    const tl = p(100, 50);
    const tr = p(200, 60);
    const br = p(195, 100);
    const bl = p(98, 90);
    expect(orderCornersClockwise([br, tl, bl, tr])).toEqual([tl, tr, br, bl]);
    expect(orderCornersClockwise([tr, bl, br, tl])).toEqual([tl, tr, br, bl]);
  });

  it('turns a crossed (bow-tie) order into a simple polygon', () => {
    const quad = orderCornersClockwise([p(0, 0), p(10, 10), p(10, 0), p(0, 10)]);
    expect(quad).toEqual([p(0, 0), p(10, 0), p(10, 10), p(0, 10)]);
    expect(signedPolygonArea(quad)).toBe(100);
  });
});

describe('convexHull', () => {
  it('drops points inside and returns the rest clockwise on screen', () => {
    const hull = convexHull([p(0, 0), p(10, 0), p(5, 2), p(10, 10), p(0, 10)]);
    expect(hull).toHaveLength(4);
    expect(hull).not.toContainEqual(p(5, 2));
    expect(signedPolygonArea(hull)).toBe(100);
  });
});

describe('scaleQuad', () => {
  it('maps corners between resolutions per axis', () => {
    const quad = scaleQuad(
      [p(10, 10), p(20, 10), p(20, 20), p(10, 20)],
      { width: 640, height: 352 },
      { width: 1280, height: 720 },
    );
    expect(quad[0].x).toBe(20);
    expect(quad[2].y).toBeCloseTo(20 * (720 / 352));
  });
});

describe('nonMaxSuppression', () => {
  it('keeps the best of overlapping boxes and every box that overlaps no kept one', () => {
    const boxes = [
      { x: 0, y: 0, w: 10, h: 10 },
      { x: 1, y: 0, w: 10, h: 10 },
      { x: 50, y: 50, w: 10, h: 10 },
    ];
    expect(nonMaxSuppression(boxes, [0.6, 0.9, 0.4], 0.3)).toEqual([1, 2]);
    expect(nonMaxSuppression(boxes, [0.6, 0.9, 0.4], 0.3, 1)).toEqual([1]);
  });
});
