import { PlateNotFoundError } from '#core/errors.ts';
import { encodeResult, encodeWithOverlays, openSource } from '#vision/image-io.ts';
import type { PlateDetection, PlateDetector } from '#vision/plate-detector.ts';
import { fillPlates, plateOverlays } from '#vision/plate-fill.ts';

export interface HidePlatesDeps {
  readonly detector: PlateDetector;
}

export interface HidePlatesParams {
  /** `#rrggbb` or a legacy name. */
  readonly plateColor: string;
  readonly plateSmoothing: boolean;
  readonly plateMaskOnly: boolean;
}

export interface HidePlatesResult {
  readonly image: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
  readonly width: number;
  readonly height: number;
  /** In the result's pixels (the source after EXIF orientation). */
  readonly plates: PlateDetection[];
}

/**
 * Hide every license plate of a photo under a solid colour.
 * 1. Open the source: format from its bytes, size after EXIF orientation (415 / 400 otherwise).
 * 2. Detect plates, each pass on the coarsest decode it needs (`SourceLevels`); none is
 *    PlateNotFoundError (803), never an unchanged photo.
 * 3. Fill each plate's quadrilateral, following its perspective.
 * 4. Encode as JPEG (JPEG, WEBP sources) or PNG (PNG sources) with all metadata stripped. A JPEG result
 *    is one libvips pass from the source's bytes with the fills composited as tiles; a PNG one is drawn
 *    into the decoded pixels, where a transparent photo's alpha is filled as `fillPlates` defines it.
 */
export async function hidePlates(
  deps: HidePlatesDeps,
  source: Buffer,
  params: HidePlatesParams,
): Promise<HidePlatesResult> {
  const levels = await openSource(source);
  const plates = await deps.detector.find(levels);
  if (plates.length === 0) throw new PlateNotFoundError('No license plate was detected in the photo');
  const quads = plates.map((p) => p.quad);
  const fill = { color: params.plateColor, smoothing: params.plateSmoothing, maskOnly: params.plateMaskOnly };
  const { width, height } = levels;
  if (levels.format === 'image/png') {
    const decoded = await levels.atScale(1);
    fillPlates(decoded, quads, fill);
    const { data, contentType } = await encodeResult(decoded);
    return { image: data, contentType, width, height, plates };
  }
  const { data, contentType } = await encodeWithOverlays(source, plateOverlays(levels, quads, fill));
  return { image: data, contentType, width, height, plates };
}
