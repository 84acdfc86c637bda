/**
 * Regions of an 8-bit matte: its holes (background the foreground encloses), what is connected to a box,
 * distances from a set of pixels, and shares of foreground. Pure functions the main-car step and the eval's
 * proxies share.
 */
import type { Box } from '#vision/math/geometry.ts';
import { FOREGROUND, labelComponents, type Matte } from '#vision/math/matte.ts';

/**
 * The regions of background (alpha < FOREGROUND, 8-connected), labelled, and whether each reaches the
 * image's border (`open`); a region that does not is a hole inside the foreground. Label 0 is foreground.
 */
export function backgroundRegions(matte: Matte): { labels: Int32Array; sizes: number[]; open: Uint8Array } {
  const { width, height, alpha } = matte;
  const inverse = { width, height, alpha: Uint8Array.from(alpha, (a) => (a < FOREGROUND ? 255 : 0)) };
  const { labels, sizes } = labelComponents(inverse, 0);
  const open = new Uint8Array(sizes.length);
  for (let x = 0; x < width; x++) {
    open[labels[x]!] = 1;
    open[labels[(height - 1) * width + x]!] = 1;
  }
  for (let y = 0; y < height; y++) {
    open[labels[y * width]!] = 1;
    open[labels[y * width + width - 1]!] = 1;
  }
  return { labels, sizes, open };
}

/**
 * Fills solid every hole (`backgroundRegions`) of at most `share` of the foreground's area, or `lowShare`
 * where the hole's centre lies below row `middle`.
 */
export function fillHoles(matte: Matte, share: number, lowShare: number, middle: number): number {
  const { width, alpha } = matte;
  const { labels, sizes, open } = backgroundRegions(matte);
  let car = 0;
  for (const a of alpha) if (a >= FOREGROUND) car++;
  const rows = new Float64Array(sizes.length);
  for (let i = 0; i < labels.length; i++) rows[labels[i]!]! += Math.floor(i / width);
  const fills = sizes.map(
    (size, label) =>
      label > 0 && !open[label] && size <= (rows[label]! / size > middle ? lowShare : share) * car,
  );
  let filled = 0;
  for (let i = 0; i < labels.length; i++) {
    if (fills[labels[i]!]) {
      alpha[i] = 255;
      filled++;
    }
  }
  return filled;
}

export function hasForeground(matte: Matte, box: Box): boolean {
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++)
      if (matte.alpha[y * matte.width + x]! >= FOREGROUND) return true;
  }
  return false;
}

/** Whether pixel (x, y) lies in `b`. */
export const inside = (b: Box, x: number, y: number) =>
  x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h;

/**
 * 1 for every foreground pixel 8-connected to a foreground pixel inside `seedBox`, else 0. A scanline
 * fill: its stack holds run starts, about the outline's length, never a pixel each.
 */
export function floodFromBox(matte: Matte, seedBox: Box): Uint8Array {
  const { width, height, alpha } = matte;
  const kept = new Uint8Array(width * height);
  const solid = (x: number, y: number) => alpha[y * width + x]! >= FOREGROUND;
  const stack: number[] = [];
  const fill = (sx: number, sy: number) => {
    stack.push(sx, sy);
    while (stack.length > 0) {
      const y = stack.pop()!;
      const x = stack.pop()!;
      const row = y * width;
      if (kept[row + x]) continue;
      let left = x;
      while (left > 0 && solid(left - 1, y) && !kept[row + left - 1]) left--;
      let right = x;
      while (right < width - 1 && solid(right + 1, y) && !kept[row + right + 1]) right++;
      kept.fill(1, row + left, row + right + 1);
      for (const ny of [y - 1, y + 1]) {
        if (ny < 0 || ny >= height) continue;
        const nrow = ny * width;
        let inRun = false;
        for (let nx = Math.max(0, left - 1); nx <= Math.min(width - 1, right + 1); nx++) {
          const open = alpha[nrow + nx]! >= FOREGROUND && !kept[nrow + nx];
          if (open && !inRun) stack.push(nx, ny);
          inRun = open;
        }
      }
    }
  };
  for (let y = seedBox.y; y < seedBox.y + seedBox.h; y++) {
    for (let x = seedBox.x; x < seedBox.x + seedBox.w; x++) {
      if (!kept[y * width + x] && solid(x, y)) fill(x, y);
    }
  }
  return kept;
}

/** Two-pass 3-4 chamfer distance in place: 0 at the sources, 255 (saturated) elsewhere to begin with. */
export function chamfer(d: Uint8Array, width: number, height: number): void {
  const relax = (i: number, j: number, w: number) => {
    const v = d[j]! + w;
    if (v < d[i]!) d[i] = v;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (d[i] === 0) continue;
      if (x > 0) relax(i, i - 1, 3);
      if (y > 0) {
        relax(i, i - width, 3);
        if (x > 0) relax(i, i - width - 1, 4);
        if (x < width - 1) relax(i, i - width + 1, 4);
      }
    }
  }
  for (let y = height - 1; y >= 0; y--) {
    for (let x = width - 1; x >= 0; x--) {
      const i = y * width + x;
      if (d[i] === 0) continue;
      if (x < width - 1) relax(i, i + 1, 3);
      if (y < height - 1) {
        relax(i, i + width, 3);
        if (x < width - 1) relax(i, i + width + 1, 4);
        if (x > 0) relax(i, i + width - 1, 4);
      }
    }
  }
}

/** Foreground components (8-connected, alpha >= FOREGROUND) of at least `minPixels`: the eval's island count. */
export function foregroundComponents(matte: Matte, minPixels = 1): number[] {
  const { sizes } = labelComponents(matte, FOREGROUND - 1);
  return sizes
    .slice(1)
    .filter((size) => size >= minPixels)
    .sort((a, b) => b - a);
}

/** Share of the foreground pixels (alpha >= FOREGROUND) that lie outside `box`; 0 for an empty matte. */
export function shareOutside(matte: Matte, box: Box): number {
  const { width, height, alpha } = matte;
  let total = 0;
  let outside = 0;
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      if (alpha[i]! < FOREGROUND) continue;
      total++;
      if (!inside(box, x, y)) outside++;
    }
  }
  return total ? outside / total : 0;
}

/** Share of foreground pixels in a region of the matte (clamped to it); 0 for an empty region. */
export function regionCoverage(matte: Matte, region: Box): number {
  const x0 = Math.max(0, Math.floor(region.x));
  const y0 = Math.max(0, Math.floor(region.y));
  const x1 = Math.min(matte.width, Math.ceil(region.x + region.w));
  const y1 = Math.min(matte.height, Math.ceil(region.y + region.h));
  let n = 0;
  let on = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      n++;
      if (matte.alpha[y * matte.width + x]! >= FOREGROUND) on++;
    }
  }
  return n ? on / n : 0;
}
