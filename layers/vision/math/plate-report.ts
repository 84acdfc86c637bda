/**
 * The plates a result reports (`plates` in the job output): each found plate's corners carried from the
 * photo's pixels to the result image's, through the car's move on a centred canvas and the `max_width`
 * scaling, so a client can audit a fill or draw its own redaction on the file it downloads.
 */
import type { PlateFound } from '#core/jobs/job.ts';
import type { Point, Quad, Size } from '#vision/math/geometry.ts';
import type { Placement } from '#vision/math/placement.ts';

/** What a plate found needs here: its corners in the photo's pixels and its scores. */
export interface FoundPlate {
  readonly quad: Quad;
  readonly score: number;
  readonly text?: { readonly score: number };
}

/** How the photo's pixels map onto the result's: the car's move (if any), then the scaling to its size. */
export interface ResultMapping {
  readonly placement?: Placement | null;
  /** The size the pixels had before encoding (the canvas when the car was moved), and the encoded size. */
  readonly drawn: Size;
  readonly encoded: Size;
}

/** Sub-pixel precision is noise at a plate's scale; a tenth keeps a 20 px plate's outline exact enough. */
const round1 = (v: number): number => Math.round(v * 10) / 10;

export function reportedPlates(plates: readonly FoundPlate[], mapping: ResultMapping): PlateFound[] {
  const sx = mapping.encoded.width / mapping.drawn.width;
  const sy = mapping.encoded.height / mapping.drawn.height;
  const p = mapping.placement ?? { scale: 1, dx: 0, dy: 0 };
  const corner = ({ x, y }: Point): [number, number] => [
    round1((x * p.scale + p.dx) * sx),
    round1((y * p.scale + p.dy) * sy),
  ];
  return plates
    .map((plate) => ({
      corners: plate.quad.map(corner) as PlateFound['corners'],
      // A plate confirmed by its text alone has no detector score; its reading's says how sure it is.
      score: Math.round(Math.max(plate.score, plate.text?.score ?? 0) * 1000) / 1000,
    }))
    .sort((a, b) => b.score - a.score);
}
