import { describe, expect, it } from 'vitest';
import { InternalError } from '#core/errors.ts';
import type { Point } from '#vision/math/geometry.ts';
import {
  decodeLpdYunet,
  lpdInputSize,
  lpdPriorCount,
  lpdPriors,
  repairCollapsedCorners,
} from '#vision/math/lpd-yunet.ts';

const p = (x: number, y: number): Point => ({ x, y });

/** Outputs for `size` where every row scores 0 except the given ones. */
function outputs(
  size: { width: number; height: number },
  rows: {
    index: number;
    conf: number;
    iou: number;
    corners: Point[];
    box?: [number, number, number, number];
  }[],
) {
  const priors = lpdPriors(size);
  const n = priors.length / 3;
  const loc = new Float32Array(n * 14);
  const conf = new Float32Array(n * 2);
  const iou = new Float32Array(n);
  for (let r = 0; r < n; r++) conf[r * 2] = 1;
  for (const row of rows) {
    const [cx, cy, s] = [priors[row.index * 3]!, priors[row.index * 3 + 1]!, priors[row.index * 3 + 2]!];
    conf[row.index * 2] = 1 - row.conf;
    conf[row.index * 2 + 1] = row.conf;
    iou[row.index] = row.iou;
    loc.set(row.box ?? [0, 0, 0, 0], row.index * 14);
    // Encoded the way the network does: offset from the prior centre in units of 0.1 * prior size.
    [4, 6, 10, 12].forEach((offset, k) => {
      const c = row.corners[k]!;
      loc[row.index * 14 + offset] = (c.x - cx) / (0.1 * s);
      loc[row.index * 14 + offset + 1] = (c.y - cy) / (0.1 * s);
    });
  }
  return { priors, loc, conf, iou };
}

// 64x64 input: stride-8 grid 8x8 with sizes [10,16,24]; row (3,3) size 24 is prior (3*8+3)*3+2 = 83.
const size64 = { width: 64, height: 64 };
const plate = [p(16, 22), p(40, 22), p(40, 34), p(16, 34)];

describe('lpdPriors', () => {
  it('has as many priors as the network has output rows', () => {
    // Row counts observed from the dynamic ONNX file at these input sizes.
    expect(lpdPriorCount({ width: 320, height: 240 })).toBe(4385);
    expect(lpdPriorCount({ width: 640, height: 480 })).toBe(17610);
    expect(lpdPriorCount({ width: 640, height: 352 })).toBe(12910);
    expect(lpdPriorCount({ width: 640, height: 426 })).toBe(15500);
    expect(lpdPriors({ width: 320, height: 240 })).toHaveLength(4385 * 3);
  });

  it('runs head, row, column, then min size, centred in each cell', () => {
    const priors = lpdPriors(size64);
    expect(Array.from(priors.subarray(0, 9))).toEqual([4, 4, 10, 4, 4, 16, 4, 4, 24]);
    expect(Array.from(priors.subarray(3 * 3, 3 * 3 + 3))).toEqual([12, 4, 10]);
    expect(Array.from(priors.subarray(83 * 3, 83 * 3 + 3))).toEqual([28, 28, 24]);
    // Last prior: the single cell of the stride-64 head, size 256.
    expect(Array.from(priors.subarray(-3))).toEqual([32, 32, 256]);
  });
});

describe('decodeLpdYunet', () => {
  it('decodes corners with variance 0.1 and scores sqrt(conf * clamp(iou))', () => {
    const o = outputs(size64, [{ index: 83, conf: 0.64, iou: 1.7, corners: plate }]);
    const [det, ...rest] = decodeLpdYunet(o, o.priors);
    expect(rest).toHaveLength(0);
    expect(det!.score).toBeCloseTo(0.8, 5);
    det!.quad.forEach((corner, k) => {
      expect(corner.x).toBeCloseTo(plate[k]!.x, 4);
      expect(corner.y).toBeCloseTo(plate[k]!.y, 4);
    });
    expect(det!.box.x).toBeCloseTo(16, 4);
    expect(det!.box.w).toBeCloseTo(24, 4);
  });

  it('drops rows under the score threshold, with negative iou clamped to 0', () => {
    const o = outputs(size64, [
      { index: 83, conf: 0.04, iou: 1, corners: plate },
      { index: 20, conf: 0.9, iou: -0.5, corners: plate },
    ]);
    expect(decodeLpdYunet(o, o.priors)).toEqual([]);
    expect(decodeLpdYunet(o, o.priors, { scoreThreshold: 0.1 })).toHaveLength(1);
  });

  it('keeps the higher-scoring of two overlapping plates and a separate one', () => {
    const shifted = plate.map((c) => p(c.x + 2, c.y + 1));
    const far = plate.map((c) => p(c.x + 20, c.y + 24));
    const o = outputs(size64, [
      { index: 83, conf: 0.5, iou: 1, corners: plate },
      { index: 86, conf: 0.9, iou: 1, corners: shifted },
      { index: 164, conf: 0.36, iou: 1, corners: far },
    ]);
    const dets = decodeLpdYunet(o, o.priors);
    expect(dets.map((d) => Number(d.score.toFixed(3)))).toEqual([0.949, 0.6]);
    expect(dets[0]!.quad[0].x).toBeCloseTo(18, 4);
  });

  it('refuses outputs whose row count does not match the priors', () => {
    const o = outputs(size64, []);
    const other = lpdPriors({ width: 128, height: 64 });
    expect(() => decodeLpdYunet(o, other)).toThrow(InternalError);
    expect(() => decodeLpdYunet(o, other)).toThrow(/235 loc.*implies 470 priors/);
  });

  it('repairs top-right and bottom-left corners pulled onto the centre', () => {
    const collapsed = [p(16, 22), p(29, 28), p(40, 34), p(27, 28)];
    // SSD box: centre (28, 28), 24 x 12, in (offset / 0.1 / size, log(size ratio) / 0.2).
    const box: [number, number, number, number] = [0, 0, Math.log(24 / 24) / 0.2, Math.log(12 / 24) / 0.2];
    const o = outputs(size64, [{ index: 83, conf: 1, iou: 1, corners: collapsed, box }]);
    const [det] = decodeLpdYunet(o, o.priors);
    expect(det!.quad.map((c) => [Math.round(c.x), Math.round(c.y)])).toEqual([
      [16, 22],
      [40, 22],
      [40, 34],
      [16, 34],
    ]);
  });
});

describe('repairCollapsedCorners', () => {
  const ssd = { x: 0, y: 0, w: 100, h: 30 };

  it('leaves a quad with about equal diagonals alone, perspective included', () => {
    const trapezoid = [p(0, 0), p(100, 5), p(100, 25), p(0, 30)] as const;
    expect(repairCollapsedCorners(trapezoid, ssd)).toBe(trapezoid);
  });

  it('stretches a pulled-in diagonal to the length of the other, keeping its direction', () => {
    const pulled = [p(0, 0), p(80, 6), p(100, 30), p(20, 24)] as const;
    const [, tr, , bl] = repairCollapsedCorners(pulled, ssd);
    expect(Math.hypot(tr.x - bl.x, tr.y - bl.y)).toBeCloseTo(Math.hypot(100, 30), 6);
    expect(tr.x + bl.x).toBeCloseTo(100, 6);
    expect((tr.y - bl.y) / (tr.x - bl.x)).toBeCloseTo(-18 / 60, 6);
  });
});

describe('lpdInputSize', () => {
  it('scales wide images to the target width, keeping the aspect ratio in multiples of 32', () => {
    expect(lpdInputSize({ width: 1280, height: 720 })).toEqual({ width: 640, height: 352 });
    expect(lpdInputSize({ width: 4000, height: 3000 })).toEqual({ width: 640, height: 480 });
    expect(lpdInputSize({ width: 1280, height: 720 }, { multiple: 64 })).toEqual({ width: 640, height: 384 });
    expect(lpdInputSize({ width: 4032, height: 3024 }, { targetWidth: 800 })).toEqual({
      width: 800,
      height: 608,
    });
  });

  it('caps the long side of portrait images', () => {
    expect(lpdInputSize({ width: 3000, height: 4000 })).toEqual({ width: 640, height: 864 });
    expect(lpdInputSize({ width: 1080, height: 1920 })).toEqual({ width: 544, height: 960 });
  });

  it('does not enlarge small images, only rounds them', () => {
    expect(lpdInputSize({ width: 380, height: 250 })).toEqual({ width: 384, height: 256 });
  });

  it('enlarges a small crop to the target width when asked, for a close look', () => {
    expect(lpdInputSize({ width: 120, height: 90 }, { targetWidth: 384, upscale: true })).toEqual({
      width: 384,
      height: 288,
    });
    expect(
      lpdInputSize({ width: 120, height: 240 }, { targetWidth: 384, maxSide: 384, upscale: true }),
    ).toEqual({ width: 192, height: 384 });
  });

  it('never makes a side under 64, where the graph gives more rows than the priors', () => {
    expect(lpdInputSize({ width: 20, height: 10 })).toEqual({ width: 64, height: 64 });
    expect(lpdInputSize({ width: 1200, height: 40 })).toEqual({ width: 640, height: 64 });
  });
});
