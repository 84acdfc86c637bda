import { normalizePlateColor } from '#core/jobs/params.ts';
import type { DecodedImage, Overlay } from '#vision/image-io.ts';
import { convexHull, type Point, type Quad, type Size } from '#vision/math/geometry.ts';

export interface FillOptions {
  /** `#rrggbb`, or a legacy name (`black`, `white`, `graphite`). */
  readonly color: string;
  /** Grow each quad a little and soften its edge, so the plate's frame does not show around the fill. */
  readonly smoothing: boolean;
  /** Fill exactly the detected quad, hard-edged, whatever `smoothing` says. */
  readonly maskOnly: boolean;
}

/**
 * Outward growth with smoothing, as a share of the quad's height. The detector's quads sit inside the
 * plate (they miss US plates' state name and frames): on the openalpr photos, 15% rather than 8% took the
 * plates with 85% of their labelled box covered from 72% to 96% (US) and 72% to 98% (BR), with no more
 * fill outside the labelled boxes than before.
 */
const DILATE_SHARE = 0.15;
/** Width in pixels of the edge ramp with smoothing: anti-aliasing plus about one pixel of softening. */
const EDGE_RAMP_PX = 1.5;

/**
 * Fills every quad with `color`, drawing into `image.pixels` in place: the caller owns its decoded
 * buffer, and a copy of a 12 MP photo (36 MB) costs about 20 ms against about 3 ms for the fill itself.
 * Rasterised here, not as an SVG for librsvg: the work is bounded by the plates' bounding boxes (well
 * under 1% of a 12 MP photo). `plateOverlays` gives the same fill as tiles for a JPEG re-encoded in one pass.
 */
export function fillPlates(image: DecodedImage, quads: readonly Quad[], options: FillOptions): void {
  const [r, g, b] = colourBytes(options.color);
  const { channels, width, pixels } = image;
  for (const quad of quads) {
    const tile = coverage(quad, image, options);
    if (!tile) continue;
    for (let ty = 0; ty < tile.height; ty++) {
      for (let tx = 0; tx < tile.width; tx++) {
        const a = tile.alpha[ty * tile.width + tx]!;
        if (a === 0) continue;
        const o = ((tile.top + ty) * width + tile.left + tx) * channels;
        pixels[o] = Math.round(pixels[o]! + (r - pixels[o]!) * a);
        pixels[o + 1] = Math.round(pixels[o + 1]! + (g - pixels[o + 1]!) * a);
        pixels[o + 2] = Math.round(pixels[o + 2]! + (b - pixels[o + 2]!) * a);
        if (channels === 4) pixels[o + 3] = Math.round(pixels[o + 3]! + (255 - pixels[o + 3]!) * a);
      }
    }
  }
}

/**
 * The fill of `fillPlates` as one RGBA tile per quad, for libvips to composite while it re-encodes the
 * source (`encodeWithOverlays`): the colour, with the share of each pixel the fill covers as alpha. On
 * an opaque photo, `over` gives what `fillPlates` gives, to within one level where the edge is soft
 * (alpha is 8-bit there); where the fill is whole or absent, exactly.
 */
export function plateOverlays(size: Size, quads: readonly Quad[], options: FillOptions): Overlay[] {
  const [r, g, b] = colourBytes(options.color);
  const overlays: Overlay[] = [];
  for (const quad of quads) {
    const tile = coverage(quad, size, options);
    if (!tile) continue;
    const rgba = Buffer.alloc(tile.width * tile.height * 4);
    for (let i = 0, o = 0; i < tile.alpha.length; i++, o += 4) {
      rgba[o] = r;
      rgba[o + 1] = g;
      rgba[o + 2] = b;
      rgba[o + 3] = Math.round(tile.alpha[i]! * 255);
    }
    overlays.push({ left: tile.left, top: tile.top, width: tile.width, height: tile.height, rgba });
  }
  return overlays;
}

/** RGB bytes of a colour as the job parameters spell it (`#rrggbb` or a legacy name). */
function colourBytes(color: string): [number, number, number] {
  const hex = normalizePlateColor(color);
  return [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}

function quadHeight([tl, tr, br, bl]: Quad): number {
  return (Math.hypot(bl.x - tl.x, bl.y - tl.y) + Math.hypot(br.x - tr.x, br.y - tr.y)) / 2;
}

interface CoverageTile {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
  /** Share of each pixel the fill covers, 0..1, row-major. */
  readonly alpha: Float64Array;
}

/** How much of each pixel around `quad` the fill covers with these options; undefined when nothing. */
function coverage(quad: Quad, size: Size, options: FillOptions): CoverageTile | undefined {
  const soft = options.smoothing && !options.maskOnly;
  const grow = soft ? DILATE_SHARE * quadHeight(quad) : 0;
  return convexCoverage(convexHull(quad), size, grow, soft ? EDGE_RAMP_PX : 0);
}

/**
 * Coverage of each pixel centre from its signed distance to the polygon, taken as the largest distance
 * to an edge's line (exact inside and along edges, which is all a 1-2 px ramp needs). `grow` pushes every
 * edge outwards, which keeps the corners sharp: the plate's perspective is followed, not rounded off.
 * `ramp` 0 gives a hard edge: a pixel is filled when its centre lies inside.
 */
function convexCoverage(
  polygon: readonly Point[],
  size: Size,
  grow: number,
  ramp: number,
): CoverageTile | undefined {
  if (polygon.length < 3) return undefined;
  const cx = polygon.reduce((s, p) => s + p.x, 0) / polygon.length;
  const cy = polygon.reduce((s, p) => s + p.y, 0) / polygon.length;
  // Per edge: outward unit normal (nx, ny) and offset c, so that distance = nx*x + ny*y - c.
  const edges = polygon.map((p, i) => {
    const q = polygon[(i + 1) % polygon.length]!;
    const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    let nx = (q.y - p.y) / len;
    let ny = -(q.x - p.x) / len;
    if (nx * (cx - p.x) + ny * (cy - p.y) > 0) {
      nx = -nx;
      ny = -ny;
    }
    return { nx, ny, c: nx * p.x + ny * p.y + grow };
  });
  const reach = grow + ramp;
  const x0 = Math.max(0, Math.floor(Math.min(...polygon.map((p) => p.x)) - reach));
  const x1 = Math.min(size.width - 1, Math.ceil(Math.max(...polygon.map((p) => p.x)) + reach));
  const y0 = Math.max(0, Math.floor(Math.min(...polygon.map((p) => p.y)) - reach));
  const y1 = Math.min(size.height - 1, Math.ceil(Math.max(...polygon.map((p) => p.y)) + reach));
  if (x1 < x0 || y1 < y0) return undefined;
  const width = x1 - x0 + 1;
  const alpha = new Float64Array(width * (y1 - y0 + 1));
  for (let y = y0; y <= y1; y++) {
    const py = y + 0.5;
    for (let x = x0; x <= x1; x++) {
      const px = x + 0.5;
      let d = Number.NEGATIVE_INFINITY;
      for (const e of edges) {
        const de = e.nx * px + e.ny * py - e.c;
        if (de > d) d = de;
      }
      alpha[(y - y0) * width + x - x0] = ramp > 0 ? Math.min(1, Math.max(0, 0.5 - d / ramp)) : d <= 0 ? 1 : 0;
    }
  }
  return { left: x0, top: y0, width, height: y1 - y0 + 1, alpha };
}
