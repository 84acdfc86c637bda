import { describe, expect, it } from 'vitest';
import {
  ctcGreedy,
  dbRegions,
  ocrDetInputSize,
  parseOcrDictionary,
  plateLineGroups,
  plateText,
} from '#vision/math/ocr.ts';

/** A probability map with text-like blobs: each rectangle at `p`, the rest at 0.05. */
function map(
  width: number,
  height: number,
  blobs: { x: number; y: number; w: number; h: number; p: number }[],
) {
  const m = new Float32Array(width * height).fill(0.05);
  for (const b of blobs)
    for (let y = b.y; y < b.y + b.h; y++) for (let x = b.x; x < b.x + b.w; x++) m[y * width + x] = b.p;
  return m;
}

/** Per-column probabilities: the given class at 0.9 in each column, the rest shared. */
function columns(classes: number, picks: number[]): Float32Array {
  const probs = new Float32Array(picks.length * classes).fill(0.1 / (classes - 1));
  picks.forEach((c, t) => {
    probs[t * classes + c] = 0.9;
  });
  return probs;
}

describe('DB post-processing of the text map', () => {
  it('gives one box per text blob, grown back by the unclip distance, and drops faint or tiny blobs', () => {
    const m = map(100, 60, [
      { x: 10, y: 10, w: 40, h: 10, p: 0.9 },
      { x: 60, y: 40, w: 20, h: 8, p: 0.4 },
      { x: 70, y: 5, w: 2, h: 2, p: 0.95 },
    ]);
    const regions = dbRegions(m, { width: 100, height: 60 });
    expect(regions).toHaveLength(1);
    const [line] = regions;
    // d = area * 1.5 / perimeter = 400 * 1.5 / 100 = 6.
    expect(line!.box).toEqual({ x: 4, y: 4, w: 52, h: 22 });
    expect(line!.score).toBeCloseTo(0.9, 5);
  });

  it('keeps blobs that touch only at a corner apart (4-connected)', () => {
    const m = map(40, 40, [
      { x: 0, y: 0, w: 10, h: 10, p: 0.9 },
      { x: 10, y: 10, w: 10, h: 10, p: 0.9 },
    ]);
    expect(dbRegions(m, { width: 40, height: 40 })).toHaveLength(2);
  });

  it('refuses a map of the wrong size', () => {
    expect(() => dbRegions(new Float32Array(10), { width: 4, height: 4 })).toThrow(RangeError);
  });

  it('sizes the detector input in multiples of 32, never enlarging unless asked', () => {
    expect(ocrDetInputSize({ width: 4000, height: 3000 }, 960)).toEqual({ width: 960, height: 736 });
    expect(ocrDetInputSize({ width: 300, height: 200 }, 960)).toEqual({ width: 288, height: 192 });
    expect(ocrDetInputSize({ width: 300, height: 200 }, 960, true)).toEqual({ width: 960, height: 640 });
  });
});

describe('CTC greedy decoding', () => {
  const dictionary = parseOcrDictionary('A\nB\n1\n2\n');
  it('collapses repeats, drops blanks and keeps a letter repeated across a blank', () => {
    // blank A A blank A B 1 1 2 space
    const r = ctcGreedy(columns(6, [0, 1, 1, 0, 1, 2, 3, 3, 4, 5]), 10, 6, dictionary);
    expect(r.text).toBe('AAB12 ');
    expect(r.confidence).toBeCloseTo(0.9, 5);
  });

  it('reads nothing from blanks alone, with confidence 0', () => {
    expect(ctcGreedy(columns(6, [0, 0, 0]), 3, 6, dictionary)).toEqual({ text: '', confidence: 0 });
  });

  it('takes one class a line, a trailing newline adding none', () => {
    expect(dictionary).toEqual(['A', 'B', '1', '2']);
  });
});

describe('plate-likeness of a read text line', () => {
  const line = { width: 200, height: 45 };
  it('accepts plates of several formats, spaces, dashes and full-width forms aside', () => {
    for (const text of [
      'M5 - XSX7',
      '77-ZFK-8',
      'B 123 ABC',
      'ABC1D23',
      'MH12AB1234',
      'MH 12 AB 1234',
      '22 BH 1234 AA',
      'B6IRCY', // B 61 RCY with its 1 read as an I
      'B7SMCY', // B 75 MCY with its 5 read as an S
      'ＫＡ０１ＡＢ',
      '123-45A', // two groups of digits, not three
      'OKO-6067',
    ]) {
      expect(plateText({ text, confidence: 0.95 }, line).score, text).toBeCloseTo(0.95, 5);
    }
    expect(plateText({ text: 'ＫＡ０１ＡＢ', confidence: 0.95 }, line).characters).toBe('KA01AB');
  });

  it('refuses words, long text, dates and signs, and low-confidence readings', () => {
    for (const text of [
      'SUNTRUP',
      'WWW.AUTOPIABV.NL',
      '2014-06-17 08:38:22',
      // A camera's timestamp read in part: the date, the time, a time with its colons lost but one.
      '2014-04-30',
      '07:29:54',
      '17 12:37:1',
      '07:2355',
      '30.04.14',
      '20140430',
      '205014', // a truck's fleet number: digits only
      'SALE',
      'A1',
      '车牌号码京A',
      '98765 43210', // a phone number: ten digits, no letters
      'MH12AB12345', // eleven
      'ma4auto.com', // a web address in lower case
      'POLO', // look-alikes without a digit read as one
      'BGIRCY',
    ]) {
      expect(plateText({ text, confidence: 0.95 }, line).score, text).toBe(0);
    }
    expect(plateText({ text: 'AB 1234', confidence: 0.5 }, line).score).toBe(0);
  });

  it('refuses a plate-like reading on a region of the wrong shape', () => {
    expect(plateText({ text: 'AB1234', confidence: 0.95 }, { width: 50, height: 50 }).score).toBe(0);
    expect(plateText({ text: 'AB1234', confidence: 0.95 }, { width: 1000, height: 50 }).score).toBe(0);
  });

  it('joins a line with the one right under it as a two-row plate, not with one beside it', () => {
    const top = { box: { x: 100, y: 100, w: 80, h: 20 }, score: 0.9 };
    const bottom = { box: { x: 95, y: 125, w: 90, h: 22 }, score: 0.9 };
    const beside = { box: { x: 300, y: 100, w: 80, h: 20 }, score: 0.9 };
    const groups = plateLineGroups([top, bottom, beside]);
    expect(groups).toContainEqual([top, bottom]);
    expect(groups.filter((g) => g.length === 2)).toHaveLength(1);
  });
});
