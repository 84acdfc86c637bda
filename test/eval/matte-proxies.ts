/**
 * Proxies of a studio cut-out's faults (issue 32), computed on every `npm run eval` so that a regression
 * shows without a look. Pure functions over the service's final matte and the main car's box:
 * - outside: foreground outside the main car's box grown by OUTSIDE_MARGIN on every side, as a share of the
 *   foreground: another car, a pole or a sign kept because it touches the car;
 * - holes: the share of the car's convex silhouette the matte leaves uncovered. A car's outline is not
 *   convex (the floor between the wheels, under the bumpers, the windscreen's rake), so a whole car scores
 *   about 0.10-0.20 here: the figure is read against itself, run to run; `enclosed` counts only the
 *   background wholly surrounded by the car (a hole in a door, a wheel's rim), which a whole car has none of;
 * - detached: foreground in components not connected to the car's (the largest one), as a share of the
 *   foreground: floating exhaust tips, a mirror cut loose, a ghost.
 */
import { type Box, convexHull, type Point, polygonArea } from '#vision/math/geometry.ts';
import { FOREGROUND, labelComponents, type Matte } from '#vision/math/matte.ts';
import { backgroundRegions } from '#vision/math/matte-regions.ts';

/** The margin around the main car's box within which foreground counts as the car's, as a share of it. */
export const OUTSIDE_MARGIN = 0.1;

export interface MatteProxies {
  readonly outside: number;
  readonly holes: number;
  readonly enclosed: number;
  readonly detached: number;
}

export function matteProxies(matte: Matte, mainBox: Box | null): MatteProxies {
  const { width, height, alpha } = matte;
  const { labels, sizes } = labelComponents(matte, FOREGROUND - 1);
  let foreground = 0;
  let largest = 0;
  for (let label = 1; label < sizes.length; label++) {
    foreground += sizes[label]!;
    if (sizes[label]! > (sizes[largest] ?? 0)) largest = label;
  }
  if (foreground === 0) return { outside: 0, holes: 0, enclosed: 0, detached: 0 };

  let outside = 0;
  if (mainBox) {
    const x0 = mainBox.x - OUTSIDE_MARGIN * mainBox.w;
    const x1 = mainBox.x + mainBox.w * (1 + OUTSIDE_MARGIN);
    const y0 = mainBox.y - OUTSIDE_MARGIN * mainBox.h;
    const y1 = mainBox.y + mainBox.h * (1 + OUTSIDE_MARGIN);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        if (
          alpha[y * width + x]! >= FOREGROUND &&
          (x + 0.5 < x0 || x + 0.5 > x1 || y + 0.5 < y0 || y + 0.5 > y1)
        )
          outside++;
  }

  // The car's convex silhouette, from the leftmost and rightmost pixel of each row of its component.
  // Each run's pixel corners: the hull of a solid rectangle is then exactly its area.
  const corners: Point[] = [];
  let carPixels = 0;
  for (let y = 0; y < height; y++) {
    let first = -1;
    let last = -1;
    for (let x = 0; x < width; x++) {
      if (labels[y * width + x] !== largest) continue;
      if (first < 0) first = x;
      last = x;
      carPixels++;
    }
    if (first >= 0)
      corners.push({ x: first, y }, { x: last + 1, y }, { x: first, y: y + 1 }, { x: last + 1, y: y + 1 });
  }
  const hull = polygonArea(convexHull(corners));
  const holes = hull > 0 ? Math.max(0, 1 - carPixels / hull) : 0;

  return {
    outside: outside / foreground,
    holes,
    enclosed: enclosedBackground(matte) / Math.max(1, carPixels),
    detached: (foreground - sizes[largest]!) / foreground,
  };
}

/** Background pixels in the holes of the matte: regions that cannot reach the image's border. */
function enclosedBackground(matte: Matte): number {
  const { sizes, open } = backgroundRegions(matte);
  let enclosed = 0;
  for (let label = 1; label < sizes.length; label++) if (!open[label]) enclosed += sizes[label]!;
  return enclosed;
}
