/**
 * The `analyze` vocabulary: photo types, views, the head's classes and their English labels. A view's
 * left/right name the side of the car that is visible, so a mirror swaps them.
 */
/** `podium`: a car on a studio backdrop or turntable, as dealers publish it; it has a view like an exterior. */
export const PHOTO_TYPES = ['exterior', 'interior', 'podium'] as const;
export type PhotoType = (typeof PHOTO_TYPES)[number];

/** left/right name the side of the car that is visible (three_quarters_left = front and the car's left). */
export const VIEWS = [
  'front',
  'rear',
  'side_left',
  'side_right',
  'three_quarters_left',
  'three_quarters_right',
  'rear_three_quarters_left',
  'rear_three_quarters_right',
] as const;
export type View = (typeof VIEWS)[number];

/** English labels; the only language so far (see docs/decisions/0037-analyze-output.md). */
export const LABELS: Readonly<Record<PhotoType | View, string>> = {
  exterior: 'Exterior',
  interior: 'Interior',
  podium: 'Podium',
  front: 'Front',
  rear: 'Rear',
  side_left: 'Left side',
  side_right: 'Right side',
  three_quarters_left: 'Front three-quarter left',
  three_quarters_right: 'Front three-quarter right',
  rear_three_quarters_left: 'Rear three-quarter left',
  rear_three_quarters_right: 'Rear three-quarter right',
};

/** Not a COCO class: the plate detector's own, numbered clear of COCO's 0-79. */
export const LICENSE_PLATE_ID = 1000;

/** The same view seen in a mirror: left and right swap. */
export function mirrorView<T extends string>(value: T): T {
  if (value.endsWith('_left')) return value.replace(/_left$/, '_right') as T;
  if (value.endsWith('_right')) return value.replace(/_right$/, '_left') as T;
  return value;
}
