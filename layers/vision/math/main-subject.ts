/**
 * Keeping only the car a photo is about in a segmenter's matte. ISNet cuts out every salient object, so a
 * neighbouring parked car, a sign or a faint smudge beside the roof line comes out as foreground; a dealer
 * publishes the one car. Pure functions over 8-bit mattes; the car boxes come from NanoDet.
 */
import { EQUAL_SIZE_SHARE } from '#core/jobs/job.ts';
import { type Box, overlapAcross, overlapDown, type Size, unionBox } from '#vision/math/geometry.ts';
import { FOREGROUND, labelComponents, type Matte } from '#vision/math/matte.ts';
import { chamfer, fillHoles, floodFromBox, hasForeground, inside } from '#vision/math/matte-regions.ts';

/**
 * The main car among vehicle boxes: the largest and most central. sqrt(area) so that a car twice as wide
 * wins over one beside it; the centre weight falls to half at a corner of the frame, so a large car cut by
 * the frame's edge loses only to a comparable one in the middle. Null when there is none.
 */
export function mainCarBox(boxes: readonly Box[], image: Size): Box | null {
  return mainCarChoice(boxes, image).box;
}

/** `mainCarBox`, and whether another vehicle was about as large (`EQUAL_SIZE_SHARE`): the output says so. */
export function mainCarChoice(boxes: readonly Box[], image: Size): { box: Box | null; ambiguous: boolean } {
  let best: Box | null = null;
  let bestRank = 0;
  const half = { x: image.width / 2, y: image.height / 2 };
  for (const box of boxes) {
    if (!(box.w > 0 && box.h > 0)) continue;
    const dx = (box.x + box.w / 2 - half.x) / half.x;
    const dy = (box.y + box.h / 2 - half.y) / half.y;
    const offCentre = Math.min(1, Math.hypot(dx, dy) / Math.SQRT2);
    const rank = Math.sqrt(box.w * box.h) * (1 - 0.5 * offCentre);
    if (rank > bestRank) {
      best = box;
      bestRank = rank;
    }
  }
  if (!best) return { box: null, ambiguous: false };
  const size = (b: Box) => Math.sqrt(b.w * b.h);
  const ambiguous = boxes.some(
    (b) => b !== best && b.w > 0 && b.h > 0 && size(b) >= EQUAL_SIZE_SHARE * size(best),
  );
  return { box: best, ambiguous };
}

/** `box` grown by `share` of its width and height on every side, clamped to the image, in whole pixels. */
export function expandBox(box: Box, share: number, image: Size): Box {
  const x0 = Math.max(0, Math.floor(box.x - share * box.w));
  const y0 = Math.max(0, Math.floor(box.y - share * box.h));
  const x1 = Math.min(image.width, Math.ceil(box.x + box.w + share * box.w));
  const y1 = Math.min(image.height, Math.ceil(box.y + box.h + share * box.h));
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

export interface MainSubjectOptions {
  /**
   * Another vehicle's box with at least this share of its area inside the main box, and at least
   * `sameCarSize` of the main box's area, is the main car boxed a second time: NanoDet often boxes a car
   * the frame cuts twice, each box short of one end, and clearing the other box cut the car's own front or
   * roof off in a straight line (a judged Audi A6 and a Daewoo Sens). The main box becomes the box around
   * both. A second car stands beside or behind the main one, so most of its box lies outside the main box.
   */
  readonly sameCarOverlap?: number;
  /**
   * A box much smaller than the main one inside it is a car further back (seen over the roof or the
   * bonnet) or a part: it stays another vehicle however much of it lies inside the main box.
   */
  readonly sameCarSize?: number;
  /**
   * Share of the main box's size by which it is grown before deciding what touches it: NanoDet's box is
   * often a few pixels inside the mirrors, the bumper's corners or the tyres.
   */
  readonly touchMargin?: number;
  /**
   * Share of the main box's size around it where another car's box clears nothing: NanoDet's box of the
   * main car is often 5% short of its bumper or rear corner, and a car behind it overlaps that part. At 4%
   * the eval's contact sheet showed a hatchback's rear corner cut off in a straight line.
   */
  readonly othersMargin?: number;
  /**
   * Nothing of the car reaches further than this share of its box outside the box: pixels beyond are
   * another object joined to the car (a car behind it that NanoDet missed, a wall, a person leaning on it).
   * Wide enough for a roof antenna, a roof box, an open door, and NanoDet's box stopping short of a car
   * the photo's edge cuts (0.15 at the sides cut a listing Daewoo's own rear, docs/decisions/0062-the-main-car-whole-and-only-it.md).
   */
  readonly reach?: number;
  /**
   * A box whose top lies at least this share of its height below the image's top marks a roof the frame
   * does not cut (NanoDet stops short of the roof by up to 0.074 of the car on 95% of the turntable frames),
   * so a part running up to the image's top from behind the roof is a pole or a sign, cleared as beyond
   * the reach.
   */
  readonly roofClearance?: number;
  /**
   * A part of the kept foreground not connected to the car (its largest component) stays only when at
   * least this share of the car: the other half of a car a pole stands in front of does, a floating exhaust
   * tip, a mirror's fragment or a ghost does not.
   */
  readonly minPartShare?: number;
  /**
   * Background wholly surrounded by the car, up to this share of the car's area each, is filled: a hole
   * the segmenter left in a door, a wheel or dark glass. Larger enclosed regions stay open: at 5% the gap
   * under a drift car's rear wing (2.8%) was filled on the DAVIS masks.
   */
  readonly maxHoleShare?: number;
  /**
   * The same for a hole whose centre lies below the middle of the main box: nothing of the background
   * shows through a car's doors, sills or wheels, where the segmenter leaves holes on reflections and
   * dark rims; the gaps that are real (under a rear wing, a spoiler, through the cabin) lie above it.
   */
  readonly maxLowHoleShare?: number;
  /**
   * Soft (below FOREGROUND) pixels further than this from the kept car, in pixels, are cleared: the edge's
   * ramp is a few pixels wide, a ghost smudge is not part of it. Null: 3 pixels per 1024 of the longer side,
   * the upscaled ramp of ISNet's 1024-pixel output.
   */
  readonly haloRadius?: number | null;
  /**
   * Where another vehicle's box overlaps the main box, ISNet's alpha from which a pixel is sure. A car
   * seen behind the main one (over its boot or bonnet) comes out of ISNet as a thick band it is unsure of,
   * the main car's body as sure, with a ramp a few pixels wide at its edge.
   */
  readonly sureLevel?: number;
  /**
   * There, pixels under `sureLevel` further than this from every sure pixel are cleared: the other car,
   * not the main car's edge. Null: twice `haloRadius` (6 pixels at ISNet's 1024).
   */
  readonly unsureReach?: number | null;
}

export interface MainSubjectResult {
  /** Pixels (any alpha above 0) cleared as belonging to another car or lying beyond `reach`. */
  readonly otherObjects: number;
  /** Foreground pixels in components that do not touch the main car. */
  readonly islands: number;
  /** Soft pixels cleared away from the car's edge. */
  readonly halo: number;
  /** Foreground pixels in parts too small to stand apart from the car (`minPartShare`). */
  readonly detached: number;
  /** Background pixels filled inside the car (`maxHoleShare`). */
  readonly holes: number;
  /**
   * False when no foreground touches the main box (the segmenter cut out something else): the matte is
   * left as it was, since clearing it would leave nothing and fail a photo the segmenter could answer.
   */
  readonly applied: boolean;
}

/**
 * Reduces `matte` in place to the main car:
 * 0. The boxes of the main car boxed twice (`sameCarOverlap`, `sameCarSize`) are joined into the main box.
 * 1. Pixels inside another car's box but outside the main box (grown by `othersMargin`) and pixels further
 *    than `reach` outside the main box are cleared; above the roof line (the box's top), so is every part
 *    that runs on up to the edge of `reach`: a pole, a sign, a tree or a car behind the roof rises past
 *    it, an antenna or a roof box ends below it (when that edge is the image's top, only where the box
 *    stands `roofClearance` below it: else the roof itself may be cut by the frame).
 *    Where another vehicle's box overlaps the main box, what ISNet is unsure of beyond `unsureReach` of what
 *    it is sure of is cleared too (`sureLevel`): a car behind, seen over the boot or the bonnet.
 * 2. Of the foreground (alpha >= FOREGROUND), only the 8-connected components touching the grown main box
 *    stay: the body with its wheels, mirrors and antennas, which are joined to it or adjacent to its box.
 * 3. Soft pixels stay only within `haloRadius` of what stayed: the anti-aliased edge, not a haze or a ghost.
 * 4. Parts not connected to the car's largest component stay only from `minPartShare` of it.
 * 5. Holes wholly inside the car, each up to `maxHoleShare` of it (`maxLowHoleShare` in its lower half), are
 *    filled solid.
 * Memory: one byte a pixel for the kept set and one for the distance, so it runs at the photo's size.
 */
export function keepMainSubject(
  matte: Matte,
  mainBox: Box,
  otherBoxes: readonly Box[],
  options: MainSubjectOptions = {},
): MainSubjectResult {
  const { width, height, alpha } = matte;
  const { main, others } = joinSameCar(mainBox, otherBoxes, options);
  const { touchMargin = 0.04, othersMargin = 0.12, reach = 0.2 } = options;
  const { roofClearance = 0.08 } = options;
  const { minPartShare = 0.02, maxHoleShare = 0.01, maxLowHoleShare = 0.05 } = options;
  const haloRadius = options.haloRadius ?? Math.max(2, Math.round((3 * Math.max(width, height)) / 1024));
  const { sureLevel = 240 } = options;
  const unsureReach = options.unsureReach ?? 2 * haloRadius;
  const size = { width, height };
  const touch = expandBox(main, touchMargin, size);
  const limit = expandBox(main, reach, size);
  const protect = expandBox(main, othersMargin, size);
  if (!hasForeground(matte, touch))
    return { otherObjects: 0, islands: 0, halo: 0, detached: 0, holes: 0, applied: false };

  let otherObjects = 0;
  const clear = (x0: number, y0: number, x1: number, y1: number, skip: Box | null) => {
    for (let y = Math.max(0, y0); y < Math.min(height, y1); y++) {
      for (let x = Math.max(0, x0); x < Math.min(width, x1); x++) {
        if (skip && inside(skip, x, y)) continue;
        const i = y * width + x;
        if (alpha[i] !== 0) {
          alpha[i] = 0;
          otherObjects++;
        }
      }
    }
  };
  // Beyond reach: the four bands around the limit box.
  clear(0, 0, width, limit.y, null);
  clear(0, limit.y + limit.h, width, height, null);
  clear(0, limit.y, limit.x, limit.y + limit.h, null);
  clear(limit.x + limit.w, limit.y, width, limit.y + limit.h, null);
  for (const other of others) {
    clear(
      Math.floor(other.x),
      Math.floor(other.y),
      Math.ceil(other.x + other.w),
      Math.ceil(other.y + other.h),
      protect,
    );
  }

  // At the image's top edge a part may be the car's own roof, cut by the frame: nothing is cleared there
  // unless the box stands clear of that edge.
  if (limit.y > 0 || main.y >= roofClearance * main.h)
    otherObjects += clearRisingParts(matte, limit.y, Math.floor(main.y));
  otherObjects += clearUnsureBehind(matte, main, others, sureLevel, unsureReach);
  const kept = floodFromBox(matte, touch);
  let islands = 0;
  for (let i = 0; i < alpha.length; i++) {
    if (alpha[i]! >= FOREGROUND && kept[i] === 0) {
      alpha[i] = 0;
      islands++;
    }
  }

  // Chamfer distance (3-4 weights, saturating at 255) from the kept pixels, reusing `kept` as its buffer.
  const distance = kept;
  for (let i = 0; i < distance.length; i++) distance[i] = distance[i] ? 0 : 255;
  chamfer(distance, width, height);
  const far = 3 * haloRadius;
  let halo = 0;
  for (let i = 0; i < alpha.length; i++) {
    const a = alpha[i]!;
    if (a !== 0 && a < FOREGROUND && distance[i]! > far) {
      alpha[i] = 0;
      halo++;
    }
  }
  const detached = minPartShare > 0 ? clearSmallParts(matte, minPartShare) : 0;
  const holes = fillHoles(matte, maxHoleShare, maxLowHoleShare, main.y + main.h / 2);
  return { otherObjects, islands, halo, detached, holes, applied: true };
}

/** The main box joined with the boxes that are the same car (`sameCarOverlap`), and the boxes left. */
function joinSameCar(
  main: Box,
  others: readonly Box[],
  options: Pick<MainSubjectOptions, 'sameCarOverlap' | 'sameCarSize'> = {},
): { main: Box; others: Box[] } {
  const { sameCarOverlap = 0.5, sameCarSize = 0.25 } = options;
  const area = (b: Box) => b.w * b.h;
  const same = (b: Box) => {
    if (b === main || area(b) < sameCarSize * area(main)) return false;
    const across = overlapAcross(b, main);
    const down = overlapDown(b, main);
    return across > 0 && down > 0 && across * down >= sameCarOverlap * area(b);
  };
  const twice = others.filter(same);
  return {
    main: twice.length > 0 ? unionBox([main, ...twice]) : main,
    others: others.filter((b) => b !== main && !twice.includes(b)),
  };
}

/**
 * Inside the main box where another vehicle's box overlaps it, the pixels under `sure` further than `reach`
 * from every sure pixel: the boundary between two cars from ISNet's own confidence, where a box cannot
 * draw it. Only inside the main box: a mirror just outside it, under a neighbour's box, is often unsure too.
 */
function clearUnsureBehind(
  matte: Matte,
  main: Box,
  others: readonly Box[],
  sure: number,
  reach: number,
): number {
  const { width, height, alpha } = matte;
  const overlaps = others.flatMap((o) => {
    const x0 = Math.max(0, Math.floor(Math.max(o.x, main.x)));
    const y0 = Math.max(0, Math.floor(Math.max(o.y, main.y)));
    const x1 = Math.min(width, Math.ceil(Math.min(o.x + o.w, main.x + main.w)));
    const y1 = Math.min(height, Math.ceil(Math.min(o.y + o.h, main.y + main.h)));
    return x1 > x0 && y1 > y0 ? [{ x0, y0, x1, y1 }] : [];
  });
  if (overlaps.length === 0) return 0;
  // Chamfer distance (3-4 weights, saturating at 255) from the sure pixels.
  const distance = new Uint8Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) distance[i] = alpha[i]! >= sure ? 0 : 255;
  chamfer(distance, width, height);
  let cleared = 0;
  for (const { x0, y0, x1, y1 } of overlaps) {
    for (let y = y0; y < y1; y++) {
      for (let i = y * width + x0; i < y * width + x1; i++) {
        if (alpha[i] !== 0 && distance[i]! > 3 * reach) {
          alpha[i] = 0;
          cleared++;
        }
      }
    }
  }
  return cleared;
}

/**
 * In the rows from `top` (the reach above the roof, or the image's top) down to `roof`, the parts of the
 * matte (any alpha, 8-connected within those rows) that touch row `top`: they go on above the reach.
 */
function clearRisingParts(matte: Matte, top: number, roof: number): number {
  const { width, alpha } = matte;
  const rows = roof - top;
  if (rows <= 0) return 0;
  const band = { width, height: rows, alpha: alpha.subarray(top * width, roof * width) };
  const { labels } = labelComponents(band, 0);
  const rising = new Set<number>();
  for (let x = 0; x < width; x++) if (labels[x]! > 0) rising.add(labels[x]!);
  if (rising.size === 0) return 0;
  let cleared = 0;
  for (let i = 0; i < labels.length; i++) {
    if (!rising.has(labels[i]!)) continue;
    band.alpha[i] = 0;
    cleared++;
  }
  return cleared;
}

/** Clears the foreground components (8-connected, with their soft edge) under `share` of the largest. */
function clearSmallParts(matte: Matte, share: number): number {
  const { labels, sizes } = labelComponents(matte, 0);
  let largest = 0;
  for (let label = 1; label < sizes.length; label++)
    if (sizes[label]! > (sizes[largest] ?? 0)) largest = label;
  const min = share * (sizes[largest] ?? 0);
  let cleared = 0;
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i]!;
    if (label > 0 && sizes[label]! < min) {
      if (matte.alpha[i]! >= FOREGROUND) cleared++;
      matte.alpha[i] = 0;
    }
  }
  return cleared;
}
