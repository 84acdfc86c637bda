import { PlateNotFoundError } from '#core/errors.ts';
import type { ImageType } from '#core/images.ts';
import type { PlateFound } from '#core/jobs/job.ts';
import { besideWhole, encodeResult, type OutputOptions, openSource } from '#vision/image-io.ts';
import { reportedPlates } from '#vision/math/plate-report.ts';
import { type PlateDetection, type PlateDetector, plateOutlines } from '#vision/plate-detector.ts';
import { fillPlates } from '#vision/plate-fill.ts';

export interface HidePlatesDeps {
  readonly detector: PlateDetector;
}

export interface HidePlatesParams extends OutputOptions {
  /** `#rrggbb` or a legacy name. */
  readonly plateColor: string;
  readonly plateSmoothing: boolean;
  readonly plateMaskOnly: boolean;
}

export interface HidePlatesResult {
  readonly image: Buffer;
  readonly contentType: ImageType;
  readonly width: number;
  readonly height: number;
  /** In the source's pixels after EXIF orientation (before any `maxWidth` scaling). */
  readonly plates: PlateDetection[];
  /** The same plates in the result image's pixels, as the job output reports them. */
  readonly platesInResult: PlateFound[];
}

/**
 * Hide every license plate of a photo under a solid colour.
 * 1. Open the source: format from its bytes, size after EXIF orientation (415 / 400 otherwise).
 * 2. Detect plates (the detector's looks, or a plate-shaped text line with a plate-like reading); none
 *    is PlateNotFoundError (803), never an unchanged photo. The result needs every
 *    pixel, so the whole decode starts at once and runs beside the whole-photo pass, which reads a
 *    shrink-on-load decode of a large photo (`besideWhole`); the close looks read the whole decode.
 * 3. Fill each plate's quadrilateral, following its perspective.
 * 4. Encode as asked (`format`, `max_width`), else JPEG (JPEG, WEBP sources) or PNG (PNG sources), with
 *    all metadata stripped.
 */
export async function hidePlates(
  deps: HidePlatesDeps,
  source: Buffer,
  params: HidePlatesParams,
): Promise<HidePlatesResult> {
  const levels = await openSource(source);
  const whole = levels.atScale(1);
  // Awaited below; a failed decode also fails the detector's own decode, which reports it.
  whole.catch(() => {});
  const plates = await deps.detector.find(besideWhole(levels, whole));
  if (plates.length === 0) throw new PlateNotFoundError('No license plate was detected in the photo');
  const decoded = await whole;
  fillPlates(decoded, plateOutlines(plates), {
    color: params.plateColor,
    smoothing: params.plateSmoothing,
    maskOnly: params.plateMaskOnly,
  });
  const { data, contentType, width, height } = await encodeResult(decoded, params);
  const platesInResult = reportedPlates(plates, { drawn: decoded, encoded: { width, height } });
  return { image: data, contentType, width, height, plates, platesInResult };
}
