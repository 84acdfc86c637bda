/** The job input (POST /jobs, POST /assets and the legacy forms), described for the document. */
import { jobInputSchema } from '#core/jobs/input.ts';
import { CENTER_ASPECT_DEFAULT, CENTER_FRAMING, MAX_WIDTH_RANGE, OUTPUT_QUALITY } from '#core/jobs/job.ts';
import { modeDescription } from '#core/jobs/operations.ts';
import { DEFAULT_PLATE_COLOR, NAMED_PLATE_COLORS } from '#core/jobs/params.ts';
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';
import { MAX_PHOTO_BYTES, MAX_SOURCE_BYTES } from '#core/limits/sources.ts';
import { formatBytes, formatDuration, formatMegapixels, formatShare, HOUR_SECONDS } from '#core/units.ts';
import { UPLOAD_TTL_HOURS } from '#core/uploads/upload.ts';
import { documentedFields } from './describe.ts';
import { booleanValues, colourValues, imageFile } from './fields.ts';

const colourNames = Object.entries(NAMED_PLATE_COLORS)
  .map(
    ([name, hex]) =>
      `\`${name}\` = \`${hex}\`${hex === DEFAULT_PLATE_COLOR ? ' (also the service default)' : ''}`,
  )
  .join(', ');

export const JobInput = documentedFields(
  jobInputSchema(),
  {
    mode: {
      description: modeDescription(),
    },
    url: {
      description:
        `Source image URL (http or https, up to ${formatBytes(MAX_SOURCE_BYTES)}), used when no \`file\` ` +
        'is sent. The service downloads it; a URL that cannot be fetched is a 400.',
    },
    asset_id: { description: 'Id of an asset uploaded earlier with POST /assets.' },
    upload_id: {
      description:
        'Id of a completed direct upload (POST /uploads, then PUT to its url): photos up to ' +
        `${formatBytes(MAX_PHOTO_BYTES)} (and ${formatMegapixels(MAX_IMAGE_PIXELS)}, as every photo), past the ` +
        'request size limit. Usable by any number of jobs of its owner for ' +
        `${formatDuration(UPLOAD_TTL_HOURS * HOUR_SECONDS)}.`,
    },
    background: {
      description:
        'Background preset, or `transparent`: the car alone as a PNG (or WEBP) with alpha, no shadow unless ' +
        '`shadow` is true. `background_file` takes priority over it; without either, the key’s stored ' +
        'background is used, then `studio`.',
    },
    format: {
      description:
        `Encoding of the result image: \`jpg\` (quality ${OUTPUT_QUALITY.jpg}), \`png\`, \`webp\` ` +
        `(quality ${OUTPUT_QUALITY.webp}, alpha kept). Not sent: ` +
        'JPEG for JPEG and WEBP photos, PNG for PNG photos and for `background: transparent`. A mask operation ' +
        'gives PNG unless asked. `jpg` with `background: transparent` is a 400 (JPEG has no alpha).',
    },
    max_width: {
      ...{
        anyOf: [
          { type: 'integer', minimum: MAX_WIDTH_RANGE.min, maximum: MAX_WIDTH_RANGE.max },
          { type: 'string', pattern: '^[0-9]+$' },
        ],
      },
      description:
        `Largest width of the result in pixels (${MAX_WIDTH_RANGE.min}–${MAX_WIDTH_RANGE.max}); a wider result ` +
        'is scaled down, keeping its proportions, with its masks. Never enlarged. Not sent: the photo’s width.',
    },
    framing: {
      description:
        '`background` and `studio_background`: `center` scales the car to fill ' +
        `${formatShare(CENTER_FRAMING.widthShare)} of the frame’s width (at most ` +
        `${formatShare(CENTER_FRAMING.maxHeightShare)} of its height, never more than ` +
        `${CENTER_FRAMING.maxUpscale} times enlarged), centred, its wheels on a floor line at ` +
        `${formatShare(CENTER_FRAMING.floorLine)} of the height with the shadow under them; \`keep\` leaves it ` +
        'where the photo has it. A car cut by ' +
        'the photo’s edge keeps its framing, and `output.composition` says so. Not sent: `center` for ' +
        '`studio_background`, `keep` for `background`.',
    },
    aspect: {
      description:
        'The canvas of a centred car (`framing: center`), width:height. It has the photo’s pixel count, so a ' +
        'portrait photo comes out landscape with the car framed as in every other photo of the vehicle; `keep` ' +
        `is the photo’s own shape. Not sent: \`${CENTER_ASPECT_DEFAULT}\` when the car is centred. Sent ` +
        'without `framing`, it centres the car; with `framing: keep` it is a 400. A car cut by the photo’s ' +
        'edge keeps its framing on that canvas: against the same edges, never enlarged.',
    },
    require_exterior: {
      ...booleanValues,
      default: true,
      description:
        '`background` and `studio_background`: a photo that `analyze` calls an interior (a cabin, a ' +
        'dashboard, a seat) fails with 802 and its credits are released, instead of a cut-out of whatever it ' +
        'shows. `false` cuts it out anyway. A PNG that is already a cut-out is never checked.',
    },
    shadow: {
      ...booleanValues,
      description:
        'Background operations: the car’s floor shadow. Not sent: on over a backdrop, off for ' +
        '`background: transparent` (true gives a soft black shadow on alpha under the cut-out).',
    },
    plate_color: {
      ...colourValues,
      description:
        `Fill colour of the plate, \`#RRGGBB\`. The legacy names are accepted too: ${colourNames}. Falls back to ` +
        'the key’s setting.',
    },
    plate_smoothing: {
      ...booleanValues,
      default: true,
      description:
        'Align and soften the plate fill’s edges. Accepts `true`/`false`, `1`/`0`, `smooth`/`raw` and also ' +
        '`yes`/`no`, `on`/`off` (any case). Falls back to the key’s setting, then true.',
    },
    plate_mask_only: {
      ...booleanValues,
      default: false,
      description:
        'Fill strictly by the detected mask, with no edge alignment or softening. Same spellings as ' +
        '`plate_smoothing`. Falls back to the key’s setting, then false.',
    },
    require_plate: {
      ...booleanValues,
      default: false,
      description:
        '`studio_background` (and `plate`, which always requires one): fail with 803 and refund, instead of ' +
        'succeeding, when the car looks like its front or rear but no plate was found to hide ' +
        '(`plate_hidden: false`). Same spellings as `plate_smoothing`.',
    },
    webhook_url: {
      description:
        'One-off webhook for this job; overrides the key’s default. It receives the final job as a POST.',
    },
  },
  {
    description:
      'Job input (spec 2.1). Send exactly one source: `file` (multipart only), `url`, `asset_id` or `upload_id`. ' +
      'Parameters in the request override the key’s stored defaults. Empty form fields count as not sent.',
  },
);

/** The uploads of a form are read by the body parser (layers/http/body.ts), not by a schema. */
const uploads = {
  file: imageFile(
    'Source image: JPG, PNG or WEBP, recognised by its magic bytes (never its name or Content-Type).',
  ).optional(),
  background_file: imageFile(
    'Custom background (JPG, PNG or WEBP); takes priority over `background` and the key’s stored background.',
  ).optional(),
};

export const JobInputForm = JobInput.extend(uploads).describe(
  'Job input as `multipart/form-data`: the fields of `JobInput` plus the uploads `file` and ' +
    '`background_file`. Booleans arrive as text, in any of the accepted spellings.',
);
