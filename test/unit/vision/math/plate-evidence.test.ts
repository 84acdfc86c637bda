import { describe, expect, it } from 'vitest';
import type { Box, Quad } from '#vision/math/geometry.ts';
import {
  isPlate,
  lookRegion,
  mayReach,
  mergeCandidates,
  mergeGroups,
  outsideShare,
  PLATE_RULE,
  type PlateCandidate,
  plateLine,
  plateScore,
  sameDetection,
  selectPlates,
  stacked,
  textReadBox,
} from '#vision/math/plate-evidence.ts';

const photo = { width: 1280, height: 720 };

function candidate(box: Box, scores: [number, number, number]): PlateCandidate {
  const { x, y, w, h } = box;
  const quad: Quad = [
    { x, y },
    { x: x + w, y },
    { x: x + w, y: y + h },
    { x, y: y + h },
  ];
  return { quad, box, scores };
}

describe('plate evidence', () => {
  it('scores a candidate by the geometric mean of its three looks, so one blind look sinks it', () => {
    expect(plateScore(candidate({ x: 0, y: 0, w: 100, h: 25 }, [0.8, 0.8, 0.8]))).toBeCloseTo(0.8);
    expect(plateScore(candidate({ x: 0, y: 0, w: 100, h: 25 }, [0.9, 0.9, 0]))).toBe(0);
    // A small plate the whole-photo pass barely saw, found clearly up close: filled.
    const small = candidate({ x: 600, y: 500, w: 60, h: 30 }, [0.08, 0.99, 0.95]);
    expect(isPlate(small, photo)).toBe(true);
  });

  it('does not fill a box taller than wide, whatever its scores (a sign, a badge)', () => {
    const tall = candidate({ x: 200, y: 500, w: 70, h: 80 }, [0.9, 0.9, 0.9]);
    const plate = candidate({ x: 200, y: 500, w: 120, h: 60 }, [0.9, 0.9, 0.9]);
    expect(isPlate(tall, photo)).toBe(false);
    expect(isPlate(plate, photo)).toBe(true);
  });

  it('fills a two-row plate, whose box comes out square (Indian N107: 134x136, every look at 0.99)', () => {
    const twoRows = candidate({ x: 217, y: 166, w: 134, h: 136 }, [1, 1, 0.99]);
    expect(isPlate(twoRows, photo)).toBe(true);
    expect(isPlate(twoRows, photo, { ...PLATE_RULE, minAspect: 1.2 })).toBe(false);
  });

  it('does not fill a box that lies mostly beyond the frame (a sign cut by the top edge)', () => {
    const sign = { x: 985, y: -18, w: 111, h: 45 };
    expect(outsideShare(sign, photo)).toBeCloseTo(0.4);
    expect(isPlate(candidate(sign, [0.8, 0.7, 0.7]), photo)).toBe(false);
    const touching = { x: 1200, y: 600, w: 84, h: 30 };
    expect(isPlate(candidate(touching, [0.8, 0.7, 0.7]), photo)).toBe(true);
  });

  it('does not fill a box in a corner of the photo, however sure: a camera timestamp, a watermark', () => {
    const sure: [number, number, number] = [0.9, 0.9, 0.9];
    // wts-lg-000025's overlays: the date and time flush with the top left, and again at the bottom right.
    expect(isPlate(candidate({ x: 4, y: 0, w: 117, h: 19 }, sure), photo)).toBe(false);
    expect(isPlate(candidate({ x: 1220, y: 698, w: 51, h: 19 }, sure), photo)).toBe(false);
    // Five pixels down from the edge, a third of a 9 px line's height away, is still flush with it.
    expect(isPlate(candidate({ x: 91, y: 6, w: 27, h: 7 }, sure), photo)).toBe(false);
    // A plate at the top edge in the middle (a car entering a gate camera's frame), and one at the left
    // edge a plate height up from the bottom, are filled.
    expect(isPlate(candidate({ x: 778, y: 1, w: 71, h: 35 }, sure), photo)).toBe(true);
    expect(isPlate(candidate({ x: 20, y: 620, w: 80, h: 40 }, sure), photo)).toBe(true);
    expect(
      isPlate(candidate({ x: 4, y: 0, w: 117, h: 19 }, sure), photo, { ...PLATE_RULE, cornerBand: 0 }),
    ).toBe(true);
  });

  it('keeps the best of overlapping candidates and every separate plate, best first', () => {
    const a = candidate({ x: 100, y: 100, w: 100, h: 30 }, [0.6, 0.6, 0.6]);
    const a2 = candidate({ x: 105, y: 102, w: 100, h: 30 }, [0.9, 0.9, 0.9]);
    const b = candidate({ x: 800, y: 400, w: 100, h: 30 }, [0.7, 0.7, 0.7]);
    const weak = candidate({ x: 500, y: 400, w: 100, h: 30 }, [0.3, 0.3, 0.3]);
    expect(selectPlates([a, b, weak, a2], photo)).toEqual([a2, b]);
    expect(selectPlates([weak], photo, { ...PLATE_RULE, threshold: 0.25 })).toEqual([weak]);
  });

  it('looks around a proposal at three plate widths, a thin box counted as twice its height wide', () => {
    expect(lookRegion({ x: 100, y: 100, w: 100, h: 25 })).toEqual({ x: 0, y: 0, w: 300, h: 225 });
    expect(lookRegion({ x: 100, y: 100, w: 40, h: 40 }).w).toBe(240);
  });

  it('finds the proposal again among the close look detections only where they overlap', () => {
    const proposal = { x: 100, y: 100, w: 100, h: 30 };
    const near = { box: { x: 104, y: 98, w: 96, h: 34 }, score: 0.7 };
    const elsewhere = { box: { x: 300, y: 100, w: 100, h: 30 }, score: 0.99 };
    expect(sameDetection(proposal, [elsewhere, near])).toBe(near);
    expect(sameDetection(proposal, [elsewhere])).toBeUndefined();
  });
});

describe('mayReach', () => {
  it('takes a further look only while the candidate can still pass the threshold', () => {
    expect(mayReach([0.31], 0.4)).toBe(true);
    expect(mayReach([0.05], 0.4)).toBe(false);
    expect(mayReach([0.31, 0.1], 0.4)).toBe(false);
    expect(mayReach([0.31, 0.9], 0.4)).toBe(true);
  });
});

describe('mergeGroups', () => {
  it('puts each box in the first group holding a box it overlaps by half, in order', () => {
    const a = { x: 0, y: 0, w: 100, h: 30 };
    const b = { x: 500, y: 0, w: 100, h: 30 };
    const nearA = { x: 5, y: 0, w: 100, h: 30 };
    const nearB = { x: 505, y: 2, w: 100, h: 30 };
    expect(mergeGroups([a, b, nearA, nearB])).toEqual([
      [0, 2],
      [1, 3],
    ]);
    expect(mergeGroups([a, { x: 80, y: 0, w: 100, h: 30 }])).toEqual([[0], [1]]);
  });
});

describe('mergeCandidates', () => {
  it('judges two proposals that land on one plate on the best score of each look', () => {
    // One proposal placed the plate well but scored low everywhere; the other came from a weak
    // whole-photo detection that both close looks found clearly.
    const placed = candidate({ x: 848, y: 954, w: 330, h: 78 }, [0.27, 0.29, 0.55]);
    const seenUpClose = candidate({ x: 850, y: 958, w: 338, h: 70 }, [0.05, 0.8, 0.82]);
    const big = { width: 2048, height: 1536 };
    expect(isPlate(placed, big) || isPlate(seenUpClose, big)).toBe(false);
    const [merged, ...rest] = mergeCandidates([placed, seenUpClose]);
    expect(rest).toEqual([]);
    expect(merged!.scores).toEqual([0.27, 0.8, 0.82]);
    expect(merged!.quad).toBe(seenUpClose.quad);
    expect(isPlate(merged!, big)).toBe(true);
  });

  it('keeps the plate line of every candidate merged, and the longer of two equally sure readings', () => {
    const reading = (text: string) => ({
      box: { x: 228, y: 103, w: 132, h: text.length > 4 ? 62 : 31 },
      characters: text,
      score: 0.91,
      reading: { text, confidence: 0.91 },
    });
    const topRow = { ...candidate({ x: 228, y: 103, w: 132, h: 31 }, [0, 0, 0]), text: reading('UP80') };
    const bothRows = { ...candidate({ x: 228, y: 103, w: 132, h: 62 }, [0, 0, 0]), text: reading('UP80CR') };
    const [merged] = mergeCandidates([topRow, bothRows]);
    expect(merged!.box).toEqual(bothRows.box);
    expect(merged!.text!.characters).toBe('UP80CR');

    const left = {
      ...candidate({ x: 166, y: 205, w: 173, h: 58 }, [0.64, 0.19, 0.19]),
      line: { x: 149, y: 205, w: 224, h: 58 },
    };
    const right = {
      ...candidate({ x: 180, y: 210, w: 151, h: 51 }, [0.62, 0.28, 0.11]),
      line: { x: 151, y: 210, w: 230, h: 51 },
    };
    expect(mergeCandidates([left, right])[0]!.line).toEqual({ x: 149, y: 205, w: 232, h: 58 });
  });

  it('leaves apart candidates on different places', () => {
    const a = candidate({ x: 100, y: 100, w: 100, h: 30 }, [0.5, 0.5, 0.5]);
    const b = candidate({ x: 160, y: 100, w: 100, h: 30 }, [0.9, 0.9, 0.9]);
    expect(mergeCandidates([a, b])).toEqual([a, b]);
  });
});

describe('stacking gate', () => {
  // A US plate and, 2.6 of its heights below, a bumper sign the looks liked as much (a San Francisco cab).
  const plate = candidate({ x: 520, y: 420, w: 72, h: 36 }, [0.9, 0.8, 0.7]);
  const sign = candidate({ x: 520, y: 513, w: 70, h: 31 }, [0.33, 0.99, 0.98]);

  it('fills only the better of two candidates stacked in one column', () => {
    expect(plateScore(sign)).toBeGreaterThan(PLATE_RULE.threshold);
    expect(selectPlates([plate, sign], photo)).toEqual([plate]);
    expect(selectPlates([plate, sign], photo, { ...PLATE_RULE, stackedWithin: 0 })).toEqual([plate, sign]);
  });

  it('keeps plates side by side, and a plate further up or down than the reach', () => {
    const beside = candidate({ x: 700, y: 430, w: 60, h: 30 }, [0.9, 0.9, 0.9]);
    expect(selectPlates([plate, beside], photo)).toEqual([beside, plate]);
    expect(stacked(plate.box, { ...sign.box, y: 420 + 18 + 3 * 36 + 1 - 15.5 }, 3)).toBe(false);
    expect(stacked(plate.box, { ...sign.box, y: 420 + 18 + 3 * 36 - 1 - 15.5 }, 3)).toBe(true);
  });

  it('fills both halves of one plate that the detector boxed apart on its row (KA03AB | AB3380)', () => {
    const first = candidate({ x: 146, y: 284, w: 81, h: 30 }, [0.77, 0.63, 0.35]);
    const rest = {
      ...candidate({ x: 219, y: 295, w: 73, h: 27 }, [0.21, 0.38, 0.33]),
      text: {
        box: { x: 212, y: 289, w: 87, h: 38 },
        characters: 'AB3380',
        score: 0.99,
        reading: { text: 'AB3380', confidence: 0.99 },
      },
    };
    expect(stacked(first.box, rest.box, 3)).toBe(false);
    expect(selectPlates([first, rest], photo)).toEqual([first, rest]);
    // The same box under the plate, most of its width in the plate's column, is a sign.
    expect(stacked(first.box, { ...rest.box, x: 150, y: 330 }, 3)).toBe(true);
  });
});

describe('the text signal', () => {
  const box = { x: 500, y: 400, w: 120, h: 30 };
  const text = (score: number) => ({
    box,
    characters: 'AB1234',
    score,
    reading: { text: 'AB 1234', confidence: score },
  });
  it('fills a proposal the detector does not confirm when its text reads like a plate', () => {
    const weak = candidate(box, [0.2, 0.1, 0]);
    expect(isPlate(weak, photo)).toBe(false);
    expect(isPlate({ ...weak, text: text(0.95) }, photo)).toBe(true);
    expect(isPlate({ ...weak, text: text(0) }, photo)).toBe(false);
  });

  it('fills a plate-shaped line the detector never proposed only when no proposal passes, and at a higher bar', () => {
    const line = { ...candidate(box, [0, 0, 0]), text: text(PLATE_RULE.textAlone) };
    const unsure = { ...candidate(box, [0, 0, 0]), text: text(PLATE_RULE.textConfirms) };
    expect(selectPlates([line], photo)).toEqual([line]);
    expect(selectPlates([unsure], photo)).toEqual([]);
    const plate = candidate({ x: 100, y: 100, w: 120, h: 30 }, [0.8, 0.8, 0.8]);
    expect(selectPlates([plate, line], photo)).toEqual([plate]);
  });

  it('turns off with thresholds above 1', () => {
    const weak = { ...candidate(box, [0.2, 0.1, 0]), text: text(1) };
    expect(isPlate(weak, photo, { ...PLATE_RULE, textConfirms: 1.01, textAlone: 1.01 })).toBe(false);
  });
});

describe('where text is read on a proposal', () => {
  it('grows the box by a tenth of its width and a fifth of its height, inside the photo', () => {
    const round = (b: Box) => ({
      x: Math.round(b.x),
      y: Math.round(b.y),
      w: Math.round(b.w),
      h: Math.round(b.h),
    });
    expect(round(textReadBox({ x: 100, y: 100, w: 100, h: 20 }, photo))).toEqual({
      x: 90,
      y: 96,
      w: 120,
      h: 28,
    });
    expect(round(textReadBox({ x: 0, y: 0, w: 100, h: 20 }, photo))).toEqual({ x: 0, y: 0, w: 110, h: 24 });
    expect(round(textReadBox({ x: 1200, y: 700, w: 80, h: 20 }, photo))).toEqual({
      x: 1192,
      y: 696,
      w: 88,
      h: 24,
    });
  });
});

describe('plateLine: the whole plate where the detector boxed part of it', () => {
  // KA03AB 3380: the detector boxed "KA03AB"; the text detector found both words of the line.
  const half = { x: 145, y: 284, w: 80, h: 30 };
  const first = { x: 150, y: 288, w: 72, h: 22 };
  const second = { x: 230, y: 288, w: 62, h: 22 };

  it('reaches across to the rest of the line', () => {
    expect(plateLine(half, [first, second])).toEqual({ x: 145, y: 284, w: 147, h: 30 });
  });

  it('adds nothing to a plate whose text lies inside its box', () => {
    expect(plateLine(half, [first])).toBeUndefined();
    expect(plateLine(half, [])).toBeUndefined();
  });

  it('stops at text a plate-border away, smaller or larger text, and another row', () => {
    const farAway = { ...second, x: 222 + 30 }; // a gap over 0.6 of the line's height
    const small = { ...second, y: 292, h: 10 };
    const below = { ...second, x: 150, y: 330 };
    expect(plateLine(half, [first, farAway])).toBeUndefined();
    expect(plateLine(half, [first, small])).toBeUndefined();
    expect(plateLine(half, [first, below])).toBeUndefined();
  });

  it('gives up when the joined box is no longer plate-shaped', () => {
    const long = [first, ...[0, 1, 2].map((i) => ({ ...second, x: 230 + 70 * i }))];
    expect(plateLine(half, long)).toBeUndefined();
  });
});
