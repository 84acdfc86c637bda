/**
 * The outline a plate fill covers, from the detector's quad: grown by the frame's margin, widened along the
 * plate to where the photo shows it ends, and carried to the photo's edge when the plate runs into it.
 * Pure functions over raw interleaved pixels.
 */
import { convexHull, outwardEdges, type Point, type Quad, type Size } from '#vision/math/geometry.ts';

/** Raw interleaved pixels (RGB or RGBA), as a decode gives them. */
export interface Pixels extends Size {
  readonly channels: number;
  readonly pixels: Uint8Array;
}

/**
 * How far along the plate, past each end of the quad, the fill may follow the photo, as a share of the
 * quad's length. The detector's quad misses a country band, a region code or a dealer's label at one end
 * (up to a third of the plate on the judged studio photos); further than this, a band of the bumper that
 * differs from what lies above and below it (a grille, a fog-lamp strip) would pass for plate.
 */
const MAX_EXTENSION_SHARE = 0.4;
/**
 * A column across the plate counts as plate when at least this share of its samples differs from the
 * bumper above and below it by `PLATE_CONTRAST` (max over RGB): a plate's field, band or label stands out
 * from the car it is screwed on; the bumper beside it continues what lies above and below.
 */
const PLATE_COLUMN_SHARE = 0.4;
const PLATE_CONTRAST = 48;
/**
 * ...and at least this share of its samples has a colour the quad itself holds (its field, characters,
 * rim): a tail lamp beside the plate stands out from the bumper too, but in a colour the plate has not.
 */
const PALETTE_SHARE = 0.4;

/**
 * The quad widened along its long axis, at each end, over the columns that look like plate (see
 * `PLATE_COLUMN_SHARE`), up to `MAX_EXTENSION_SHARE` of its length. An end is widened only when the plate
 * visibly ends within that reach (a column of bumper follows) or runs into the photo's edge (then to the
 * edge): a run of plate-looking columns to the end of the reach is a strip of the car, not the plate.
 */
export function plateExtent(image: Pixels, quad: Quad): Quad {
  const [p0, p1, p2, p3] = quad;
  let [a0, a1, b1, b0] = [p0, p1, p2, p3];
  // The long edges run a0 -> a1 and b0 -> b1; a quad handed over standing up is turned.
  if (dist(p0, p3) + dist(p1, p2) > dist(p0, p1) + dist(p3, p2)) [a0, a1, b1, b0] = [p1, p2, p3, p0];
  const length = (dist(a0, a1) + dist(b0, b1)) / 2;
  const height = (dist(a0, b0) + dist(a1, b1)) / 2;
  if (!(length >= 2 && height >= 2)) return quad;
  const ux = (a1.x - a0.x + b1.x - b0.x) / (2 * length);
  const uy = (a1.y - a0.y + b1.y - b0.y) / (2 * length);
  const uLen = Math.hypot(ux, uy) || 1;
  const u = { x: ux / uLen, y: uy / uLen };
  const start = mid(a0, b0);
  const end = mid(a1, b1);
  const palette = platePalette(image, a0, a1, b1, b0);
  const before = reach(image, start, { x: -u.x, y: -u.y }, height, length, palette);
  const after = reach(image, end, u, height, length, palette);
  if (before === 0 && after === 0) return quad;
  const move = (p: Point, t: number, sign: number): Point => ({
    x: p.x + sign * t * u.x,
    y: p.y + sign * t * u.y,
  });
  const out = [move(a0, before, -1), move(a1, after, 1), move(b1, after, 1), move(b0, before, -1)];
  return (p0 === a0 ? out : [out[3]!, out[0]!, out[1]!, out[2]!]) as unknown as Quad;
}

/**
 * How far past `from` (the middle of one short edge) along `dir` the plate goes on: 0 unless a run of
 * plate columns ends within the reach or meets the photo's edge.
 */
function reach(
  image: Pixels,
  from: Point,
  dir: Point,
  height: number,
  length: number,
  palette: readonly number[][],
): number {
  const limit = MAX_EXTENSION_SHARE * length;
  const gap = Math.max(2, 0.2 * height);
  const across = { x: -dir.y, y: dir.x };
  let last = 0;
  // Looked at up to a gap past the reach, so that a plate ending right at it is seen to end.
  for (let t = 1; t <= limit + gap; t++) {
    const c = { x: from.x + t * dir.x, y: from.y + t * dir.y };
    const column = plateColumn(image, c, across, height, palette);
    if (column === null) return t - 1 - last <= gap && last <= limit ? t + height : last;
    if (column) last = t;
    else if (t - last > gap) return last <= limit ? last : 0;
  }
  return 0;
}

/**
 * Whether the column across the plate at `c` looks like plate against the bumper above and below it;
 * null where the column's samples leave the photo.
 */
function plateColumn(
  image: Pixels,
  c: Point,
  across: Point,
  height: number,
  palette: readonly number[][],
): boolean | null {
  const n = Math.max(5, Math.round(0.8 * height));
  const above = colourAt(image, c, across, -0.95 * height);
  const below = colourAt(image, c, across, 0.95 * height);
  let differs = 0;
  let ofPlate = 0;
  for (let k = 0; k < n; k++) {
    const s = (k / (n - 1) - 0.5) * 0.8 * height;
    const v = colourAt(image, c, across, s);
    if (!v) return null;
    const far = (ref: number[] | null) => !ref || contrast(v, ref) >= PLATE_CONTRAST;
    if (!(far(above) && far(below))) continue;
    differs++;
    if (palette.some((ref) => contrast(v, ref) < PLATE_CONTRAST)) ofPlate++;
  }
  return differs >= PLATE_COLUMN_SHARE * n && ofPlate >= PALETTE_SHARE * n;
}

/** Colours of the plate inside the quad: a 8 x 3 grid over its middle. */
function platePalette(image: Pixels, a0: Point, a1: Point, b1: Point, b0: Point): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < 8; i++) {
    const s = 0.1 + (0.8 * i) / 7;
    for (const t of [0.25, 0.5, 0.75]) {
      const top = { x: a0.x + s * (a1.x - a0.x), y: a0.y + s * (a1.y - a0.y) };
      const bottom = { x: b0.x + s * (b1.x - b0.x), y: b0.y + s * (b1.y - b0.y) };
      const v = colourAt(
        image,
        { x: top.x + t * (bottom.x - top.x), y: top.y + t * (bottom.y - top.y) },
        top,
        0,
      );
      if (v) out.push(v);
    }
  }
  return out;
}

function colourAt(image: Pixels, c: Point, across: Point, s: number): number[] | null {
  const x = Math.floor(c.x + s * across.x);
  const y = Math.floor(c.y + s * across.y);
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return null;
  const o = (y * image.width + x) * image.channels;
  return [image.pixels[o]!, image.pixels[o + 1]!, image.pixels[o + 2]!];
}

const contrast = (a: number[], b: number[]) =>
  Math.max(Math.abs(a[0]! - b[0]!), Math.abs(a[1]! - b[1]!), Math.abs(a[2]! - b[2]!));
const dist = (a: Point, b: Point) => Math.hypot(b.x - a.x, b.y - a.y);
const mid = (a: Point, b: Point): Point => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });

/**
 * The convex `polygon` with every edge pushed `grow` pixels outwards (mitred corners: the plate's
 * perspective is followed, not rounded off).
 */
export function grownPolygon(polygon: readonly Point[], grow: number): Point[] {
  const hull = convexHull(polygon);
  if (grow === 0 || hull.length < 3) return hull;
  const lines = outwardEdges(hull).map((edge) => ({ ...edge, c: edge.c + grow }));
  return lines.map((l, i) => {
    const m = lines[(i + lines.length - 1) % lines.length]!;
    const det = m.nx * l.ny - m.ny * l.nx;
    const p = hull[i]!;
    if (Math.abs(det) < 1e-9) return { x: p.x + grow * l.nx, y: p.y + grow * l.ny };
    return { x: (m.c * l.ny - l.c * m.ny) / det, y: (m.nx * l.c - l.nx * m.c) / det };
  });
}

/**
 * `polygon` carried to the photo's edge where it comes within `within` pixels of it: a plate the frame
 * cuts is filled to the edge, not short of it by the few pixels the detector's corner stops at.
 */
export function toPhotoEdge(polygon: readonly Point[], size: Size, within: number): Point[] {
  const beyond = (v: number, extent: number) => (v < within ? -1 : v > extent - within ? extent + 1 : v);
  const moved = polygon.map((p) => ({ x: beyond(p.x, size.width), y: beyond(p.y, size.height) }));
  if (moved.every((p, i) => p.x === polygon[i]!.x && p.y === polygon[i]!.y)) return [...polygon];
  return convexHull([...polygon, ...moved]);
}
