import type { Matte } from '#vision/math/matte.ts';

/** An empty matte of the given size. */
export const blank = (width: number, height: number): Matte => ({
  width,
  height,
  alpha: new Uint8Array(width * height),
});

/** Sets alpha `v` on the rectangle x0..x1, y0..y1 (ends excluded). */
export const paint = (m: Matte, x0: number, y0: number, x1: number, y1: number, v = 255) => {
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) m.alpha[y * m.width + x] = v;
  return m;
};
