/**
 * Which LPD-YuNet detections are filled as plates. One pass over the whole photo at 640 px wide misses
 * small plates (a 60 px US plate in a 1280 px photo is 30 px at that size and scores 0.1-0.3) and takes
 * text, signs and stickers for plates. So the whole-photo pass only proposes places, at a low score, and
 * each place gets a close look: the detector again on a crop around it, enlarged to `LOOK_WIDTH`, once
 * as it is and once mirrored. A plate scores well in all three looks; a sign or a sticker seldom does in
 * all of them. The fill follows the close look's quad, measured at several times the resolution.
 */
import {
  type Box,
  boxIoU,
  overlapAcross,
  overlapDown,
  type Quad,
  type Size,
  unionBox,
} from '#vision/math/geometry.ts';
import { PLATE_TEXT_DEFAULTS, type Reading } from '#vision/math/ocr.ts';

/** Proposals below this whole-photo score are not looked at: no labelled plate of the eval scored under it. */
export const PROPOSAL_FLOOR = 0.05;
/** At most this many close looks per photo (each an LPD-YuNet run: docs/quality.md, Speed and memory). */
export const MAX_PROPOSALS = 5;
/** The crop is this many plate widths wide (a plate's width taken as at least twice its height). */
const LOOK_CONTEXT = 3;
/** The crop is scaled, up or down, to this width for the close look. */
export const LOOK_WIDTH = 384;
/** A close look keeps detections down to this score: it finds a place again, and the rule judges its score. */
export const LOOK_SCORE_FLOOR = 0.02;
/**
 * A close look's crop is read from the coarsest decode of the photo on which it is at least this wide
 * (from the whole photo when none is): at `LOOK_WIDTH`, a look never reads fewer pixels than it is fed.
 */
export const LOOK_MIN_CROP = LOOK_WIDTH;

/**
 * The second signal: plates carry text. A line of text read in or around a candidate, with how much the
 * reading and the line's outline look like a plate's (`plateText` in ocr.ts; 0: not at all).
 */
export interface TextEvidence {
  /** The text line's box, in source pixels: the fill covers it too (the union of both outlines). */
  readonly box: Box;
  /** Letters and digits read, upper-case. */
  readonly characters: string;
  readonly score: number;
  /** What the recogniser read, as read: the evals judge it again under other plate-text rules. */
  readonly reading: Reading;
}

/** A proposal of the shrunk pass is kept only if at least this share of the photo's width (a close-up). */
export const CLOSE_UP_MIN_WIDTH = 0.2;
/** ... and at most this share: wider boxes of that pass lie on the edge of its grey border. */
export const CLOSE_UP_MAX_WIDTH = 0.9;
/**
 * The detector also reads inside every vehicle NanoDet finds, largest first, up to this many: a bound on
 * a photo's time (a car park), not a choice of which vehicles matter.
 */
export const CAR_LOOKS = 16;
/**
 * A vehicle is read this wide (enlarged from the whole decode when smaller). 384 and 512 lost plates 40 px
 * high that 640 finds (three ladder composites of ro and br: a NanoDet box around more than the car).
 */
export const CAR_LOOK_WIDTH = 640;
/** When nothing is confirmed, text lines are searched for in this many vehicles (largest first). */
export const TEXT_SEARCH_CARS = 3;
export const CAR_MIN_SCORE = 0.35;
/**
 * A vehicle is read only when its pass sees it at least this many times larger than the whole-photo pass
 * does (a vehicle under about two thirds of the photo's width): a larger one's plate is proposed there.
 */
export const CAR_MIN_ZOOM = 1.5;
/** Text lines searched for when nothing is confirmed: the area's long side read at most this large. */
export const TEXT_SEARCH_MAX_SIDE = 640;
/** At most this many plate-shaped text lines (best detection score first) are read in that search. */
export const TEXT_ALONE_LINES = 8;

/**
 * Where text is read on a proposal: its box grown by a tenth of its width and a fifth of its height
 * (a detector box often clips the first or last character), clipped to the photo.
 */
export function textReadBox(box: Box, image: Size): Box {
  return grownWithin(box, image, 0.1, 0.2);
}

/**
 * `box` grown by `across` of its width on each side and `down` of its height above and below, clipped to
 * the image, at least a pixel a side. Fractional: the reader rounds its crop outward itself, and the box
 * stays the outline the fill covers. (main-subject.ts `expandBox` rounds to whole pixels: a crop's box.)
 */
function grownWithin(box: Box, image: Size, across: number, down: number): Box {
  const x = Math.max(0, box.x - box.w * across);
  const y = Math.max(0, box.y - box.h * down);
  const x1 = Math.min(image.width, box.x + box.w * (1 + across));
  const y1 = Math.min(image.height, box.y + box.h * (1 + down));
  return { x, y, w: Math.max(1, x1 - x), h: Math.max(1, y1 - y) };
}

/** One proposal with its three scores; `quad` is the close look's when it found the plate again. */
export interface PlateCandidate {
  readonly quad: Quad;
  readonly box: Box;
  /**
   * Score of the whole-photo pass, of the close look, of the mirrored close look (0: not found again).
   * All 0 for a plate-shaped text line the detector did not propose (`text` alone).
   */
  readonly scores: readonly [number, number, number];
  /** The text read on the candidate, when it was read (only where it can change the decision). */
  readonly text?: TextEvidence;
  /** The plate's whole text where the detector boxed part of it (`plateLine`): the fill covers it too. */
  readonly line?: Box;
}

export interface PlateRule {
  /** Geometric mean of the three scores at or above which a candidate is a plate. */
  readonly threshold: number;
  /**
   * Boxes narrower than this many times their height are not filled: a tall box is a sign or a badge.
   * Two-row plates (Indian 340x200 mm, EU square plates 280-340 x 200) come out of LPD-YuNet with boxes
   * of 1:1 once the look adds its margin, so the bound sits under 1:1. Wheel rims and badges are
   * near-square too; the close looks keep them under the threshold (the best of 733 eval photos: 0.34).
   */
  readonly minAspect: number;
  /**
   * Share of the box's height (or width) that may lie outside the photo. Past it, the candidate is
   * mostly a guess about what is beyond the frame: signs cut by the top edge, timestamps in a corner.
   */
  readonly maxOutside: number;
  /**
   * A candidate in a corner of the photo is not filled: within `cornerBand` of its heights, or within
   * `cornerEdge` of the photo's height, of the top or bottom edge, and within `cornerWidth` of the width
   * from the left or right edge. Camera timestamps (flush with the edge, a few pixels high), channel logos
   * and listing sites' watermarks sit there; a plate there is cut by two edges of the frame. None of the
   * 616 labelled plates of the eval lies in one (the nearest: 1.02 heights up from the bottom edge at the
   * left; 0.66 heights, 3.8% of the height, at 71% of the width). `cornerBand` 0 turns the gate off.
   */
  readonly cornerBand: number;
  readonly cornerEdge: number;
  readonly cornerWidth: number;
  /**
   * A weaker candidate stacked on a better one (their spans across overlap, their centres at most this
   * many of the better one's heights apart up or down) is not filled; 0 turns the gate off. One end of a
   * car carries one plate: what sits right above or below it is a dealer's sticker or a bumper sign that
   * the looks took for a plate. A plate of another car is smaller and off to a side, never in the column.
   */
  readonly stackedWithin: number;
  /**
   * A proposal of the detector that fails `threshold` is still a plate when the text read on it scores at
   * least this (`plateText`: 4-10 letters and digits, plate outline); above 1 turns the text signal off.
   */
  readonly textConfirms: number;
  /**
   * A plate-shaped text line the detector did not propose at all is a plate when its reading scores at
   * least this; above 1: never. Looked for only when nothing else is filled.
   */
  readonly textAlone: number;
}

/**
 * Chosen at least cost (a miss per plate, two per non-plate fill) held out by source; the threshold stays
 * under the chosen 0.45 so a plate in plain view is not answered 803 (docs/quality.md, Plates; shipped rule).
 */
export const PLATE_RULE: PlateRule = {
  threshold: 0.4,
  minAspect: 0.9,
  maxOutside: 0.25,
  cornerBand: 0.6,
  cornerEdge: 0.02,
  cornerWidth: 0.2,
  stackedWithin: 3,
  textConfirms: 0.7,
  textAlone: 0.9,
};

/** Where the close look at a proposal crops, in source pixels (clipped to the photo by the detector). */
export function lookRegion(box: Box): Box {
  const w = LOOK_CONTEXT * Math.max(box.w, 2 * box.h);
  const h = w * 0.75;
  return { x: box.x + box.w / 2 - w / 2, y: box.y + box.h / 2 - h / 2, w, h };
}

/** The detection of a close look that is the proposal found again: overlapping it, best score. */
export function sameDetection<T extends { box: Box; score: number }>(
  proposal: Box,
  found: readonly T[],
): T | undefined {
  let best: T | undefined;
  for (const f of found) if (boxIoU(f.box, proposal) >= 0.3 && (!best || f.score > best.score)) best = f;
  return best;
}

/**
 * Whether a candidate with these scores so far can still reach `threshold` (the looks not taken yet
 * counted as 1): a look that cannot change the decision is not taken. Unlooked scores stay 0.
 */
export function mayReach(known: readonly number[], threshold: number): boolean {
  return known.reduce((p, s) => p * s, 1) >= threshold ** 3;
}

export function plateScore(candidate: PlateCandidate): number {
  const [a, b, c] = candidate.scores;
  return Math.cbrt(a * b * c);
}

/** Share of the box outside the photo, along the axis where it is largest. */
export function outsideShare(box: Box, image: Size): number {
  const outX = Math.max(0, -box.x) + Math.max(0, box.x + box.w - image.width);
  const outY = Math.max(0, -box.y) + Math.max(0, box.y + box.h - image.height);
  return Math.max(box.w > 0 ? outX / box.w : 1, box.h > 0 ? outY / box.h : 1);
}

/** Whether the detector's looks, or else the text read on the candidate, confirm it under `rule`. */
export function confirmed(candidate: PlateCandidate, rule: PlateRule = PLATE_RULE): boolean {
  if (plateScore(candidate) >= rule.threshold) return true;
  const text = candidate.text?.score ?? 0;
  const proposed = candidate.scores[0] > 0;
  return text > 0 && text >= (proposed ? rule.textConfirms : rule.textAlone);
}

/** Whether `box` lies in a corner of the image under `rule` (`PlateRule.cornerBand`). */
function inCorner(
  box: Box,
  image: Size,
  rule: Pick<PlateRule, 'cornerBand' | 'cornerEdge' | 'cornerWidth'>,
): boolean {
  const band = Math.max(rule.cornerBand * box.h, rule.cornerEdge * image.height);
  const topOrBottom = box.y <= band || image.height - (box.y + box.h) <= band;
  const side = rule.cornerWidth * image.width;
  const leftOrRight = box.x + box.w <= side || box.x >= image.width - side;
  return rule.cornerBand > 0 && topOrBottom && leftOrRight;
}

export function isPlate(candidate: PlateCandidate, image: Size, rule: PlateRule = PLATE_RULE): boolean {
  const { box } = candidate;
  return (
    confirmed(candidate, rule) &&
    box.h > 0 &&
    box.w / box.h >= rule.minAspect &&
    outsideShare(box, image) <= rule.maxOutside &&
    !inCorner(box, image, rule)
  );
}

/** Candidates whose boxes overlap this much (IoU) are one object (`mergeCandidates`). */
export const MERGE_IOU = 0.5;

/**
 * Proposals whose close looks land on the same place (IoU >= MERGE_IOU) are one object: each look's best
 * score counts, and the corners are those of the best close look. A plate the whole-photo pass saw
 * twice, once well placed and once well scored, is judged on both. The fill covers every plate line
 * found around them, and the longer of two equally sure readings.
 */
export function mergeCandidates(candidates: readonly PlateCandidate[]): PlateCandidate[] {
  const groups = mergeGroups(candidates.map((c) => c.box)).map((g) => g.map((i) => candidates[i]!));
  return groups.map((g) => {
    if (g.length === 1) return g[0]!;
    const best = g.reduce((a, b) => ((b.scores[1] - a.scores[1] || byRank(a, b)) > 0 ? b : a));
    const max = (i: number) => Math.max(...g.map((m) => m.scores[i]!));
    const texts = g.flatMap((m) => (m.text ? [m.text] : []));
    const text = texts.length > 0 ? texts.reduce((a, b) => (longerReading(a, b) > 0 ? b : a)) : undefined;
    // Each look that found the whole plate's text row found the same row: the fill covers all of them.
    const lines = g.flatMap((m) => (m.line ? [m.line] : []));
    return {
      quad: best.quad,
      box: best.box,
      scores: [max(0), max(1), max(2)] as const,
      ...(text ? { text } : {}),
      ...(lines.length > 0 ? { line: unionBox(lines) } : {}),
    };
  });
}

/**
 * Which boxes `mergeCandidates` takes as one object, as indices in order: each box joins the first group
 * holding a box it overlaps by `MERGE_IOU`. The close looks use it to skip looks no group can use.
 */
export function mergeGroups(boxes: readonly Box[]): number[][] {
  const groups: number[][] = [];
  boxes.forEach((box, i) => {
    const group = groups.find((g) => g.some((m) => boxIoU(boxes[m]!, box) >= MERGE_IOU));
    if (group) group.push(i);
    else groups.push([i]);
  });
  return groups;
}

/**
 * The candidates that pass `rule`, best first, overlapping ones merged into the best. Text lines the
 * detector did not propose count only when no proposal passes: they are looked for only then.
 */
export function selectPlates(
  candidates: readonly PlateCandidate[],
  image: Size,
  rule: PlateRule = PLATE_RULE,
): PlateCandidate[] {
  const proposed = pickPlates(
    candidates.filter((c) => c.scores[0] > 0),
    image,
    rule,
  );
  return proposed.length > 0 ? proposed : pickPlates(candidates, image, rule);
}

function pickPlates(candidates: readonly PlateCandidate[], image: Size, rule: PlateRule): PlateCandidate[] {
  const kept: PlateCandidate[] = [];
  const sorted = mergeCandidates(candidates)
    .filter((c) => isPlate(c, image, rule))
    .sort(byRank);
  for (const c of sorted) {
    if (kept.every((k) => boxIoU(k.box, c.box) <= 0.3 && !stacked(k.box, c.box, rule.stackedWithin))) {
      kept.push(c);
    }
  }
  return kept;
}

/**
 * Best first: the detector's score, then the text reading's (text-only candidates come last), then the
 * longer reading: of two text lines read alike, "UP80CR" (both rows of a plate) is more of it than "UP80".
 */
function byRank(a: PlateCandidate, b: PlateCandidate): number {
  return plateScore(b) - plateScore(a) || longerReading(a.text, b.text);
}

/** Positive when `b` is the better reading: a higher score, then more characters. */
function longerReading(a: TextEvidence | undefined, b: TextEvidence | undefined): number {
  return (b?.score ?? 0) - (a?.score ?? 0) || (b?.characters.length ?? 0) - (a?.characters.length ?? 0);
}

/**
 * Whether `weaker` lies in `better`'s column, its centre within `heights` of `better`'s heights. Two boxes
 * side by side on one row, their spans across overlapping by less than half the narrower, are the halves
 * of one plate's text (LPD-YuNet boxed "KA03AB" and "AB3380" of KA03AB3380), not a sign under a plate.
 */
export function stacked(better: Box, weaker: Box, heights: number): boolean {
  const across = overlapAcross(better, weaker);
  const down = overlapDown(better, weaker);
  const sideBySide =
    down >= 0.5 * Math.min(better.h, weaker.h) && across < 0.5 * Math.min(better.w, weaker.w);
  const apart = Math.abs(better.y + better.h / 2 - (weaker.y + weaker.h / 2));
  return heights > 0 && across > 0 && !sideBySide && apart <= heights * better.h;
}

/** Where text lines are looked for around a fill: this many of its widths either side, its heights above and below. */
const LINE_SEARCH_WIDTHS = 1.2;
const LINE_SEARCH_HEIGHTS = 1;
/** That area's long side is read at this size (enlarged when smaller): plates' text lines come out 15-40 px high. */
export const LINE_SEARCH_MAX_SIDE = 480;

/** The area searched for the rest of a plate's text around a candidate's box (clipped to the photo). */
export function lineSearchArea(box: Box, image: Size): Box {
  return grownWithin(box, image, LINE_SEARCH_WIDTHS, LINE_SEARCH_HEIGHTS);
}

/**
 * The whole plate when the detector saw part of it: LPD-YuNet, trained on 7-character plates, often boxes
 * half of a 10-character Indian plate ("KA03AB" of KA03AB3380). The text lines (`lines`, source pixels)
 * that cross the box, then those on the same row that follow them across a gap of a space (under 0.6 of a
 * line's height) and are as tall (0.7-1.4 times), joined with the box. Undefined when that adds nothing,
 * or when the joined box is no longer a plate's (wider than a plate's text line, `PLATE_TEXT_DEFAULTS`, or
 * 2.5 times the box's width).
 */
export function plateLine(box: Box, lines: readonly Box[]): Box | undefined {
  const joined = lines.filter(
    (l) =>
      l.h <= 1.2 * box.h && overlapAcross(l, box) > 0 && overlapDown(l, box) > 0.5 * Math.min(l.h, box.h),
  );
  if (joined.length === 0) return undefined;
  for (let grew = true; grew; ) {
    grew = false;
    for (const l of lines) {
      if (joined.includes(l)) continue;
      const follows = joined.some(
        (j) =>
          l.h >= 0.7 * j.h &&
          l.h <= 1.4 * j.h &&
          overlapDown(l, j) > 0.5 * Math.min(l.h, j.h) &&
          -overlapAcross(l, j) < 0.6 * Math.min(l.h, j.h),
      );
      if (follows) {
        joined.push(l);
        grew = true;
      }
    }
  }
  const x0 = Math.min(box.x, ...joined.map((l) => l.x));
  const x1 = Math.max(box.x + box.w, ...joined.map((l) => l.x + l.w));
  // Across only: the box's own height already holds the plate's rows.
  const line = { x: x0, y: box.y, w: x1 - x0, h: box.h };
  if (line.w <= 1.1 * box.w) return undefined;
  if (line.w / line.h > PLATE_TEXT_DEFAULTS.maxAspect || line.w > 2.5 * box.w) return undefined;
  return line;
}
