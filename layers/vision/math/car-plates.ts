/**
 * The main car's own plate, in studio mode: where on the car a plate can sit, and the candidates of a
 * second, closer look at the car when the finder filled nothing on it (plate-visibility.ts runs the
 * looks). Pure: boxes, quads and scores in.
 */
import {
  type Box,
  boxIoU,
  overlapAcross,
  overlapDown,
  type Quad,
  quadBoundingBox,
  signedPolygonArea,
} from '#vision/math/geometry.ts';
import { type PlateCandidate, sameDetection } from '#vision/math/plate-evidence.ts';

/**
 * A fill whose centre lies higher on the main car than this share of the car's box (from its top) lies
 * where the car has glass: it needs a text line across it (`textAcross`). The plates of the 200 exterior
 * listing photos lie from 0.27 down (boot lids seen from low, audi_a6__595723201s); a window that LPD-YuNet
 * takes for a plate (chevrolet_aveo__596052707s, 0.997 in all three looks) shows the background through it.
 */
const GLASS_DEPTH = 0.45;

/** Whether a fill's box lies where the car has glass (`GLASS_DEPTH`). */
export function highOnCar(plate: Box, car: Box): boolean {
  return car.h > 0 && (plate.y + plate.h / 2 - car.y) / car.h < GLASS_DEPTH;
}

/**
 * A text line across a plate: at least this share of its box's width, wider than tall (`textAcross`). A
 * wheel's hub and its spokes, which LPD-YuNet takes for a plate when read larger, give square regions.
 */
const TEXT_ACROSS_SHARE = 0.5;
const TEXT_MIN_ASPECT = 1.2;

/**
 * The text region (PP-OCR's detector, in the photo's pixels) that runs across `plate`: wider than tall,
 * half of it or more inside the plate's rows, over `TEXT_ACROSS_SHARE` of its width; the widest such.
 */
export function lineAcross(plate: Box, regions: readonly Box[]): Box | undefined {
  return regions
    .filter(
      (r) =>
        r.w >= TEXT_MIN_ASPECT * r.h &&
        overlapDown(r, plate) >= 0.5 * r.h &&
        overlapAcross(r, plate) >= TEXT_ACROSS_SHARE * plate.w,
    )
    .sort((a, b) => b.w - a.w)[0];
}

/**
 * Of a plate's outlines, the one whose box agrees best (IoU) with its text line: the direct and the
 * mirrored look can tilt one plate differently by 15 degrees, and the characters run along the plate.
 */
export function cornersAlong(line: Box, corners: readonly Quad[]): Quad | undefined {
  let best: Quad | undefined;
  let bestIoU = 0;
  for (const q of corners) {
    const iou = boxIoU(quadBoundingBox(q), line);
    if (iou > bestIoU) [best, bestIoU] = [q, iou];
  }
  return best;
}

/** A place on the car is no plate when wider than this share of the car's box: a look that boxed a window. */
const PLATE_MAX_CAR_WIDTH = 0.5;

/** A detection of the plate detector, in the photo's pixels. */
interface Found {
  readonly quad: Quad;
  readonly box: Box;
  readonly score: number;
}

/** A place the closer look proposed on the car, with what its two close looks found around it. */
export interface LookedPlace {
  readonly place: Found;
  readonly direct: readonly Found[];
  readonly mirrored: readonly Found[];
}

/** A candidate of the closer look, with every outline its looks gave that encloses an area. */
export interface CloserCandidate extends PlateCandidate {
  readonly corners: readonly Quad[];
}

/**
 * The closer look's candidates, one a place: its scores the pass's, the close look's and the mirrored
 * close look's (the finder's own three), its corners those of the better of the two looks that found it
 * again with a quad that encloses an area (a look squeezed to a line gives none), else the pass's. Places
 * wider than `PLATE_MAX_CAR_WIDTH` of the car are left out.
 */
export function closerLookCandidates(looked: readonly LookedPlace[], car: Box): CloserCandidate[] {
  return looked
    .filter(({ place }) => place.box.w <= PLATE_MAX_CAR_WIDTH * car.w)
    .map(({ place, direct, mirrored }) => {
      const [d, m] = [sameDetection(place.box, direct), sameDetection(place.box, mirrored)];
      const outlines = [d, m]
        .filter((f): f is Found => f !== undefined && enclosesArea(f.quad))
        .sort((a, b) => b.score - a.score);
      const quad = outlines[0]?.quad ?? place.quad;
      const corners = [...outlines.map((f) => f.quad), ...(enclosesArea(place.quad) ? [place.quad] : [])];
      return {
        quad,
        box: quadBoundingBox(quad),
        scores: [place.score, d?.score ?? 0, m?.score ?? 0],
        corners,
      };
    });
}

/** A quad whose area is at least a third of its bounding box's: four corners, not a line. */
function enclosesArea(quad: Quad): boolean {
  const b = quadBoundingBox(quad);
  return b.w > 0 && b.h > 0 && Math.abs(signedPolygonArea(quad)) >= (b.w * b.h) / 3;
}
