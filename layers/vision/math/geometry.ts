/** Pixel coordinates, y pointing down. */
export interface Point {
  readonly x: number;
  readonly y: number;
}

/** Corners in the order top-left, top-right, bottom-right, bottom-left (clockwise on screen). */
export type Quad = readonly [Point, Point, Point, Point];

/** Axis-aligned box: top-left corner and size. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface Size {
  readonly width: number;
  readonly height: number;
}

export function boundingBox(points: readonly Point[]): Box {
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    if (p.x < minX) minX = p.x;
    if (p.y < minY) minY = p.y;
    if (p.x > maxX) maxX = p.x;
    if (p.y > maxY) maxY = p.y;
  }
  return { x: minX, y: minY, w: maxX - minX, h: maxY - minY };
}

export const quadBoundingBox = (quad: Quad): Box => boundingBox(quad);

/** How far two boxes' spans across overlap; negative: the gap between them. */
export const overlapAcross = (a: Box, b: Box): number => Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);

/** How far two boxes' spans down overlap; negative: the gap between them. */
export const overlapDown = (a: Box, b: Box): number => Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);

export function boxIoU(a: Box, b: Box): number {
  const iw = overlapAcross(a, b);
  const ih = overlapDown(a, b);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/** Shoelace area; positive when the vertices run clockwise on screen (y down). */
export function signedPolygonArea(points: readonly Point[]): number {
  let twice = 0;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const q = points[(i + 1) % points.length]!;
    twice += p.x * q.y - q.x * p.y;
  }
  return twice / 2;
}

export const polygonArea = (points: readonly Point[]): number => Math.abs(signedPolygonArea(points));

/**
 * Puts four corners in the order top-left, top-right, bottom-right, bottom-left, whatever order the
 * detector emitted them in. Sorting by angle around the centroid gives a simple (non-crossing) polygon
 * even for tilted plates; the start is the corner nearest the top-left, which stays stable up to ~45° of roll.
 */
export function orderCornersClockwise(points: readonly [Point, Point, Point, Point]): Quad {
  const cx = (points[0].x + points[1].x + points[2].x + points[3].x) / 4;
  const cy = (points[0].y + points[1].y + points[2].y + points[3].y) / 4;
  // With y down, increasing atan2 runs clockwise on screen.
  const sorted = [...points].sort((p, q) => Math.atan2(p.y - cy, p.x - cx) - Math.atan2(q.y - cy, q.x - cx));
  let start = 0;
  for (let i = 1; i < 4; i++) {
    const s = sorted[i]!;
    const best = sorted[start]!;
    if (s.x + s.y < best.x + best.y) start = i;
  }
  return [sorted[start]!, sorted[(start + 1) % 4]!, sorted[(start + 2) % 4]!, sorted[(start + 3) % 4]!];
}

/** Convex hull (Andrew's monotone chain), clockwise on screen, collinear points dropped. */
export function convexHull(points: readonly Point[]): Point[] {
  const pts = [...points].sort((a, b) => a.x - b.x || a.y - b.y);
  if (pts.length < 3) return pts;
  const cross = (o: Point, a: Point, b: Point) => (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  const half = (list: Point[]): Point[] => {
    const out: Point[] = [];
    for (const p of list) {
      while (out.length >= 2 && cross(out[out.length - 2]!, out[out.length - 1]!, p) <= 0) out.pop();
      out.push(p);
    }
    out.pop();
    return out;
  };
  // Counter-clockwise in y-up terms is clockwise on screen.
  return [...half(pts), ...half(pts.reverse())];
}

/** A box measured on one copy of an image, on a copy `sx` times as wide and `sy` times as tall. */
export const scaleBox = (b: Box, sx: number, sy = sx): Box => ({
  x: b.x * sx,
  y: b.y * sy,
  w: b.w * sx,
  h: b.h * sy,
});

/** Maps a quad measured on an image of size `from` onto the same image at size `to`. */
export function scaleQuad(quad: Quad, from: Size, to: Size): Quad {
  const sx = to.width / from.width;
  const sy = to.height / from.height;
  const s = (p: Point): Point => ({ x: p.x * sx, y: p.y * sy });
  return [s(quad[0]), s(quad[1]), s(quad[2]), s(quad[3])];
}

/**
 * Greedy non-maximum suppression: indices of the kept boxes, best score first. A box is dropped when it
 * overlaps an already kept one by more than `iouThreshold`.
 */
export function nonMaxSuppression(
  boxes: readonly Box[],
  scores: readonly number[],
  iouThreshold: number,
  maxKept = Number.POSITIVE_INFINITY,
): number[] {
  const order = boxes.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const kept: number[] = [];
  for (const i of order) {
    if (kept.length >= maxKept) break;
    const box = boxes[i]!;
    if (kept.every((k) => boxIoU(boxes[k]!, box) <= iouThreshold)) kept.push(i);
  }
  return kept;
}

/** An axis-aligned box as a quad, corners clockwise from the top-left. */
export function boxQuad(b: Box): Quad {
  return [
    { x: b.x, y: b.y },
    { x: b.x + b.w, y: b.y },
    { x: b.x + b.w, y: b.y + b.h },
    { x: b.x, y: b.y + b.h },
  ];
}

/**
 * Each edge of a convex polygon as its line: the outward unit normal (nx, ny) and offset c, so that
 * `nx * x + ny * y - c` is a point's signed distance outside that edge.
 */
export function outwardEdges(polygon: readonly Point[]): { nx: number; ny: number; c: number }[] {
  const cx = polygon.reduce((s, p) => s + p.x, 0) / polygon.length;
  const cy = polygon.reduce((s, p) => s + p.y, 0) / polygon.length;
  return polygon.map((p, i) => {
    const q = polygon[(i + 1) % polygon.length]!;
    const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    let nx = (q.y - p.y) / len;
    let ny = -(q.x - p.x) / len;
    if (nx * (cx - p.x) + ny * (cy - p.y) > 0) [nx, ny] = [-nx, -ny];
    return { nx, ny, c: nx * p.x + ny * p.y };
  });
}

/** The box around boxes. */
export function unionBox(boxes: readonly Box[]): Box {
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.w));
  const y1 = Math.max(...boxes.map((b) => b.y + b.h));
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}
