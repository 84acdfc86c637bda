/**
 * Which LPD-YuNet detections are filled as plates. One pass over the whole photo at 640 px wide misses
 * small plates (a 60 px US plate in a 1280 px photo is 30 px at that size and scores 0.1-0.3) and takes
 * text, signs and stickers for plates. So the whole-photo pass only proposes places, at a low score, and
 * each place gets a close look: the detector again on a crop around it, enlarged to `LOOK_WIDTH`, once
 * as it is and once mirrored. A plate scores well in all three looks; a sign or a sticker seldom does in
 * all of them. The fill follows the close look's quad, measured at several times the resolution.
 */
import { type Box, boxIoU, type Quad, type Size } from '#vision/math/geometry.ts';

/** Proposals below this whole-photo score are not looked at: no labelled plate of the eval scored under it. */
export const PROPOSAL_FLOOR = 0.05;
/** At most this many close looks per photo (each costs about 35 ms on one core). */
export const MAX_PROPOSALS = 5;
/** The crop is this many plate widths wide (a plate's width taken as at least twice its height). */
export const LOOK_CONTEXT = 3;
/** The crop is scaled, up or down, to this width for the close look. */
export const LOOK_WIDTH = 384;
/**
 * A close look's crop is read from the coarsest decode of the photo on which it is at least this wide
 * (from the whole photo when none is): at `LOOK_WIDTH`, a look never reads fewer pixels than it is fed.
 */
export const LOOK_MIN_CROP = LOOK_WIDTH;

/** One proposal with its three scores; `quad` is the close look's when it found the plate again. */
export interface PlateCandidate {
  readonly quad: Quad;
  readonly box: Box;
  /** Score of the whole-photo pass, of the close look, of the mirrored close look (0: not found again). */
  readonly scores: readonly [number, number, number];
}

export interface PlateRule {
  /** Geometric mean of the three scores at or above which a candidate is a plate. */
  readonly threshold: number;
  /**
   * Boxes narrower than this many times their height are not filled: wheel rims and badges are
   * near-square. No plate standard is under 1.9:1 (US 2:1, EU 4.7:1, BR 3.1:1), but a US plate seen
   * from above and rolled a little has a box of 1.4:1, so the bound stays well below the standards.
   */
  readonly minAspect: number;
  /**
   * Share of the box's height (or width) that may lie outside the photo. Past it, the candidate is
   * mostly a guess about what is beyond the frame: signs cut by the top edge, timestamps in a corner.
   */
  readonly maxOutside: number;
  /**
   * A weaker candidate stacked on a better one (their spans across overlap, their centres at most this
   * many of the better one's heights apart up or down) is not filled; 0 turns the gate off. One end of a
   * car carries one plate: what sits right above or below it is a dealer's sticker or a bumper sign that
   * the looks took for a plate. A plate of another car is smaller and off to a side, never in the column.
   */
  readonly stackedWithin: number;
}

/**
 * Chosen by grouped 5-fold cross-validation on ../shared/eval/plates (test/eval/plates.ts): on four
 * folds, the rule of least cost (misses plus two per fill on something that is not a plate, per photo,
 * averaged over the regions), judged on the fifth. Every fold chose this rule; see docs/quality.md.
 */
export const PLATE_RULE: PlateRule = {
  threshold: 0.4,
  minAspect: 1.2,
  maxOutside: 0.25,
  stackedWithin: 3,
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

export function isPlate(candidate: PlateCandidate, image: Size, rule: PlateRule = PLATE_RULE): boolean {
  const { box } = candidate;
  return (
    plateScore(candidate) >= rule.threshold &&
    box.h > 0 &&
    box.w / box.h >= rule.minAspect &&
    outsideShare(box, image) <= rule.maxOutside
  );
}

/**
 * Proposals whose close looks land on the same place (IoU >= 0.5) are one object: each look's best
 * score counts, and the corners are those of the best close look. A plate the whole-photo pass saw
 * twice, once well placed and once well scored, is judged on both.
 */
export function mergeCandidates(candidates: readonly PlateCandidate[]): PlateCandidate[] {
  const groups: PlateCandidate[][] = [];
  for (const c of candidates) {
    const group = groups.find((g) => g.some((m) => boxIoU(m.box, c.box) >= 0.5));
    if (group) group.push(c);
    else groups.push([c]);
  }
  return groups.map((g) => {
    if (g.length === 1) return g[0]!;
    const best = g.reduce((a, b) => (b.scores[1] > a.scores[1] ? b : a));
    const max = (i: number) => Math.max(...g.map((m) => m.scores[i]!));
    return { quad: best.quad, box: best.box, scores: [max(0), max(1), max(2)] as const };
  });
}

/** The candidates that pass `rule`, best first, overlapping ones merged into the best. */
export function selectPlates(
  candidates: readonly PlateCandidate[],
  image: Size,
  rule: PlateRule = PLATE_RULE,
): PlateCandidate[] {
  const kept: PlateCandidate[] = [];
  const sorted = mergeCandidates(candidates)
    .filter((c) => isPlate(c, image, rule))
    .sort((a, b) => plateScore(b) - plateScore(a));
  for (const c of sorted) {
    if (kept.every((k) => boxIoU(k.box, c.box) <= 0.3 && !stacked(k.box, c.box, rule.stackedWithin))) {
      kept.push(c);
    }
  }
  return kept;
}

/** Whether `weaker` lies in `better`'s column, its centre within `heights` of `better`'s heights. */
export function stacked(better: Box, weaker: Box, heights: number): boolean {
  const across = Math.min(better.x + better.w, weaker.x + weaker.w) - Math.max(better.x, weaker.x);
  const apart = Math.abs(better.y + better.h / 2 - (weaker.y + weaker.h / 2));
  return heights > 0 && across > 0 && apart <= heights * better.h;
}
