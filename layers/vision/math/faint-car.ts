/**
 * A car the segmenter saw only faintly (at night): its cut-out from the model's soft matte, where a car
 * detector vouches for a vehicle. Pure functions over 8-bit mattes.
 */
import type { Box } from '#vision/math/geometry.ts';
import { expandBox } from '#vision/math/main-subject.ts';
import { FOREGROUND, labelComponents, type Matte } from '#vision/math/matte.ts';

/**
 * Below this alpha a pixel of the segmenter's own matte is no part of a faint car. Chosen on the Romanian
 * night frames (ro-0115..ro-0124; docs/quality.md, Refusals per source): ISNet is sure only of a car's lit
 * lamps there and gives its body 0.1-0.3, and the lowest level tried refused fewest. Any photo reaching this rule
 * has under 1% of sure foreground, so a lower level only decides between a rough cut-out and an 802.
 */
export const FAINT_LEVEL = 16;

/**
 * A car the segmenter saw only faintly (at night it is sure of the lit lamps and gives the body a third of
 * full alpha), as a matte, when a car detector saw a vehicle in the photo: the components of the
 * segmenter's own matte above `level` that hold one of its sure pixels (alpha >= FOREGROUND) or touch a
 * vehicle's box, with their alpha stretched so that `2 * level` and above is solid. Null when no vehicle
 * was seen (a photo with no car gets no invented cut-out) or nothing above `level` is joined to the seeds.
 * `matte` is the model's matte as segmented (before the main-car step); boxes are in its pixels.
 */
export function faintCarMatte(matte: Matte, vehicles: readonly Box[], level = FAINT_LEVEL): Matte | null {
  if (vehicles.length === 0) return null;
  const { width, height, alpha } = matte;
  const { labels, sizes } = labelComponents(matte, level - 1);
  const keep = new Uint8Array(sizes.length);
  for (let i = 0; i < alpha.length; i++) if (alpha[i]! >= FOREGROUND) keep[labels[i]!] = 1;
  for (const v of vehicles) {
    const b = expandBox(v, 0, { width, height });
    for (let y = b.y; y < b.y + b.h; y++) {
      for (let x = b.x; x < b.x + b.w; x++) keep[labels[y * width + x]!] = 1;
    }
  }
  keep[0] = 0;
  const out = new Uint8Array(alpha.length);
  let any = false;
  for (let i = 0; i < alpha.length; i++) {
    if (!keep[labels[i]!]) continue;
    out[i] = Math.min(255, Math.round(((alpha[i]! - level + 1) * 255) / (level + 1)));
    any = true;
  }
  return any ? { width, height, alpha: out } : null;
}
