/**
 * Framing a car in a studio result: where the car goes in the frame (`framing: center`), and whether the
 * photo's edge cut it, in which case it keeps its place. Pure functions over matte statistics.
 */
import { CENTER_FRAMING, type FramingTarget } from '#core/jobs/job.ts';
import type { Box, Size } from '#vision/math/geometry.ts';
import { FOREGROUND, type Matte, type MatteStats } from '#vision/math/matte.ts';

export type Edge = 'left' | 'right' | 'top' | 'bottom';

/** Where the car goes: every source pixel (x, y) lands at (x * scale + dx, y * scale + dy). */
export interface Placement {
  readonly scale: number;
  readonly dx: number;
  readonly dy: number;
}

/**
 * The canvas of a centred car with the shape `ratio` (width, height): the photo's pixel count, at most, in
 * whole multiples of the ratio so the shape is exact. A photo of that shape keeps its size; a portrait
 * photo of 3000 x 4000 at 4:3 becomes 4000 x 3000. Null ratio: the photo's own size.
 */
export function canvasSize(photo: Size, ratio: readonly [number, number] | null): Size {
  if (!ratio) return { width: photo.width, height: photo.height };
  const [w, h] = ratio;
  const unit = Math.max(1, Math.floor(Math.sqrt((photo.width * photo.height) / (w * h))));
  return { width: w * unit, height: h * unit };
}

/**
 * The placement of `framing: center` in a frame (the photo's size unless given): the car's box scaled to
 * the target share of the width (height and upscale permitting), its centre on the frame's vertical
 * centre line, its ground line (the wheels) on the floor line.
 */
export function centerPlacement(
  stats: MatteStats,
  target: FramingTarget = CENTER_FRAMING,
  frame: Size = stats,
): Placement | null {
  const { box, groundY } = stats;
  const { width, height } = frame;
  if (!box) return null;
  const scale = Math.min(
    (target.widthShare * width) / box.w,
    (target.maxHeightShare * height) / box.h,
    target.maxUpscale,
  );
  const dx = width / 2 - (box.x + box.w / 2) * scale;
  const dy = target.floorLine * height - groundY * scale;
  return { scale, dx, dy };
}

/**
 * A car cut by the photo's edge, moved onto a canvas of another shape (`canvasSize`) with its framing
 * kept: each cut side stays on the same side of the canvas, never enlarged (the cut would only show more),
 * shrunk only to fit. Along an axis that is not cut, it keeps its relative place: its centre on that share
 * of the width, its ground line on that share of the height. On a canvas of the photo's size this is the
 * photo as it is (scale 1, no move).
 */
export function keptPlacement(stats: MatteStats, cut: readonly Edge[], frame: Size): Placement | null {
  const { box, groundY } = stats;
  if (!box) return null;
  const { width, height } = frame;
  const scale = Math.min(1, width / box.w, height / box.h);
  const has = (edge: Edge) => cut.includes(edge);
  let dx: number;
  if (has('left')) dx = -box.x * scale;
  else if (has('right')) dx = width - (box.x + box.w) * scale;
  else dx = ((box.x + box.w / 2) / stats.width) * width - (box.x + box.w / 2) * scale;
  let dy: number;
  if (has('top')) dy = -box.y * scale;
  else if (has('bottom')) dy = height - (box.y + box.h) * scale;
  else dy = (groundY / stats.height) * height - groundY * scale;
  // Whatever was not cut stays whole: the box is pushed back inside the canvas.
  dx = Math.min(Math.max(dx, -box.x * scale), width - (box.x + box.w) * scale);
  dy = Math.min(Math.max(dy, -box.y * scale), height - (box.y + box.h) * scale);
  return { scale, dx, dy };
}

/** A box moved by a placement. */
export function placeBox(box: Box, p: Placement): Box {
  return { x: box.x * p.scale + p.dx, y: box.y * p.scale + p.dy, w: box.w * p.scale, h: box.h * p.scale };
}

/**
 * The photo's edges the car runs into: an edge row or column holding a real run of car (2% of the car's
 * box on that side, at least 2 pixels), so a stray pixel of the edge's ramp does not count. Such a car is
 * missing its cut part and is never framed as if it were whole.
 */
export function edgesCuttingCar(matte: Matte, stats: MatteStats): Edge[] {
  const { box } = stats;
  if (!box) return [];
  const { width, height, alpha } = matte;
  const countColumn = (x: number) => {
    let n = 0;
    for (let y = box.y; y < box.y + box.h; y++) if (alpha[y * width + x]! >= FOREGROUND) n++;
    return n;
  };
  const countRow = (y: number) => {
    let n = 0;
    for (let x = box.x; x < box.x + box.w; x++) if (alpha[y * width + x]! >= FOREGROUND) n++;
    return n;
  };
  const minColumn = Math.max(2, 0.02 * box.h);
  const minRow = Math.max(2, 0.02 * box.w);
  const edges: Edge[] = [];
  if (box.x === 0 && countColumn(0) >= minColumn) edges.push('left');
  if (box.x + box.w === width && countColumn(width - 1) >= minColumn) edges.push('right');
  if (box.y === 0 && countRow(0) >= minRow) edges.push('top');
  if (box.y + box.h === height && countRow(height - 1) >= minRow) edges.push('bottom');
  return edges;
}
