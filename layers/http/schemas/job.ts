/** The Job resource and the job envelope (spec 2.2, 2.3), as every job route and the webhook answer them. */
import * as z from 'zod';
import { RESULT_TTL_DAYS } from '#core/jobs/expiry.ts';
import {
  ASPECTS,
  BACKGROUNDS,
  EQUAL_SIZE_SHARE,
  FRAMINGS,
  JOB_STAGES,
  JOB_STATUSES,
} from '#core/jobs/job.ts';
import { OPERATION_NAMES, PRICES } from '#core/jobs/operations.ts';
import { formatShare } from '#core/units.ts';
import { resultPath, resultUrl, timestamp } from './fields.ts';

export const JobStatus = z
  .enum(JOB_STATUSES)
  .describe(
    'Job status. `queued` → `processing` → `success` or `failed`; `cancelled` by the owner. Clients stop ' +
      'polling on `success`, `failed` or `cancelled`.',
  );
export const Operation = z.enum(OPERATION_NAMES).describe('The operation (`mode` of the job input).');
export const JobStage = z
  .enum(JOB_STAGES)
  .describe(
    'Where in the pipeline the job is, finer than `status`: `queued` (created, or queued again by a ' +
      'retry), `preparing` (started: the photo is prepared and the models run), `done` (a finished job, ' +
      'whatever its outcome).',
  );

export const AnalysisLabel = z
  .object({
    value: z
      .string()
      .describe('Machine value, e.g. `exterior` (photo type) or `front`, `three_quarters_left` (view).'),
    label: z.string().describe('Localised label of `value`.'),
    source_class: z.string().optional().describe('Class of the model the value was derived from.'),
    conf: z.int().describe('Confidence, 0–100.'),
  })
  .describe('A classification with its confidence.');
const Detection = z.object({ id: z.int(), conf: z.int().describe('Confidence, 0–100.') });
export const Analysis = z
  .object({
    photo_type: AnalysisLabel.describe('Interior, exterior or podium.'),
    view: AnalysisLabel.optional().describe('The car’s view angle; given for exterior photos.'),
    detections: z
      .record(z.string(), Detection)
      .optional()
      .describe('Detected classes (the car, the licence plate, ...) by name.'),
    background_detections: z.record(z.string(), Detection).optional().describe('Background classes by name.'),
  })
  .describe('Classification of the photo (spec 2.4), the result of `analyze`.');

const Composition = z
  .object({
    framing: z
      .enum(FRAMINGS)
      .describe('The framing applied: `keep` when asked, or when the photo’s edge cut the car.'),
    aspect: z
      .enum(ASPECTS)
      .optional()
      .describe(
        'The canvas’s shape: the `aspect` applied (a car the photo’s edge cuts keeps its framing on it), or ' +
          '`keep` (the photo’s own). ' +
          'Absent on results made before the option existed.',
      ),
    car_cut_by_edge: z
      .array(z.enum(['left', 'right', 'top', 'bottom']))
      .describe('The photo’s edges that cut the car; when any does, the car was not re-framed.'),
    vehicles: z.int().describe('Distinct vehicles found in the photo, the kept one included; only it stays.'),
    main_car_ambiguous: z
      .boolean()
      .describe(
        `Another vehicle was about as large as the kept one (${formatShare(EQUAL_SIZE_SHARE)}): the more ` +
          'central one was kept.',
      ),
    notes: z.array(z.string()).describe('The same decisions in words, for a person.'),
  })
  .describe('`background` and `studio_background`: where the car was put and what was decided for you.');

const point = z.tuple([z.number(), z.number()]);

const PlateFound = z
  .object({
    corners: z
      .tuple([point, point, point, point])
      .describe('The plate’s corners as [x, y]: top-left, top-right, bottom-right, bottom-left (y down).'),
    score: z
      .number()
      .min(0)
      .max(1)
      .describe('0-1: the detector’s confidence, or the plate text’s where its reading confirmed the plate.'),
  })
  .describe('A plate the job filled (`plate`, `plate_mask`, `studio_background`) or found (`background`).');

export const JobOutput = z
  .object({
    url: resultUrl.optional(),
    plate_mask_url: resultPath('plate mask').optional(),
    background_mask_url: resultPath('background mask').optional(),
    mask_url: resultPath('mask of a mask operation').optional(),
    analysis: Analysis.optional(),
    output_kind: z.enum(['image', 'mask', 'analysis']),
    inference_cached: z.boolean().describe('The model output was reused from an identical earlier request.'),
    model_version: z
      .record(z.string(), z.string())
      .describe('Version of each model that produced the output.'),
    plates_detected: z
      .int()
      .optional()
      .describe(
        '`plate`: plates filled. `studio_background`: plates on the car filled; `background`: plates on the car found (and kept).',
      ),
    plates: z
      .array(PlateFound)
      .optional()
      .describe(
        'Each plate counted in `plates_detected`, surest first, in the pixels of the result image you ' +
          'download (after any re-framing and `max_width`): audit a fill, or redact in your own style.',
      ),
    plate_hidden: z
      .boolean()
      .optional()
      .describe(
        '`background` and `studio_background`: false when the car looks like its front or rear (a plate-like ' +
          'shape on it) but no plate was filled, so a plate may still be readable; true otherwise. ' +
          'Send `require_plate` to make such a job fail with 803 instead.',
      ),
    composition: Composition.optional(),
  })
  .describe('What a successful job produced; `analyze` has no image URL.');

export const JobError = z
  .object({
    code: z
      .int()
      .describe(
        '803 no plate detected, 802 no background mask, 800 photo not classifiable, 400 source not a ' +
          'decodable image, 413 image over the pixel limit, 415 unsupported format, 404 a stored file no ' +
          'longer exists, 500 internal (a missing model file is named in the message), 503 every processing ' +
          'slot was in use for the whole of its run (nothing charged; retry it later).',
      ),
    message: z.string(),
  })
  .describe('Why the job failed.');

export const JobLinks = z
  .object({
    self: z.string().describe('`/api/v1/jobs/{job_id}`'),
    cancel: z.string().describe('POST here to cancel.'),
    retry: z.string().describe('POST here to retry a failed job.'),
    result: z.string().optional().describe('The result image (same as `url`), once there is one.'),
  })
  .describe('Related paths: `self`, `cancel`, `retry`, and `result` once there is a result image.');

export const QuotaSnapshot = z
  .object({
    remaining: z.number().describe('Credits available.'),
    credits_remaining: z.number().describe('Same as `remaining` (legacy name).'),
  })
  .describe('Balance of the paying account.');

export const Job = z
  .object({
    id: z.string().describe('Job id, `job_` and 24 random characters.'),
    status: JobStatus,
    operation: Operation,
    stage: JobStage,
    cancel_requested: z.boolean().describe('Cooperative cancellation of a processing job was requested.'),
    cost_credits: z
      .number()
      .describe(`Credits charged or reserved: ${PRICES.edit}, or ${PRICES.analysis} for \`analyze\`.`),
    attempts: z.int().describe('Workflow executions started for this job.'),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    expires_at: timestamp
      .nullable()
      .describe(
        `When the result files are deleted: ${RESULT_TTL_DAYS} days after \`finished_at\`; null for a job without ` +
          'result files (not succeeded, or an analysis). From then on the job shows no `url` (nor mask URLs, ' +
          'nor `links.result`) and GET /results answers 410.',
      ),
    output: JobOutput.nullable(),
    error: JobError.nullable(),
    links: JobLinks,
  })
  .describe('The Job resource (spec 2.2).');

export const JobEnvelope = z
  .object({
    result: z.boolean().describe('False exactly when the job failed or was cancelled.'),
    job_id: z.string().describe('Same as `id`.'),
    status: JobStatus,
    code: z
      .int()
      .describe(
        '202 while queued or processing, 200 on success, the error’s code on failure, 409 when cancelled.',
      ),
    message: z.string().optional().describe('Present when the job failed or was cancelled.'),
    url: resultUrl.optional(),
    plate_mask_url: resultPath('plate mask').optional(),
    background_mask_url: resultPath('background mask').optional(),
    mask_url: resultPath('mask').optional(),
    analysis: Analysis.optional(),
    expires_in_days: z
      .int()
      .optional()
      .describe(
        `Life of the result in days (${RESULT_TTL_DAYS}) after \`finished_at\`; present on success with a result file. The moment itself is \`expires_at\`.`,
      ),
    mode: Operation,
    background: z
      .enum([...BACKGROUNDS, 'custom'])
      .nullable()
      .describe(
        'Effective background: a preset, `transparent`, or `custom` when a background file was used; null for the operations that draw none (`plate`, the masks, `analyze`).',
      ),
    plate_color: z.string().describe('Effective plate colour, `#rrggbb` (legacy names are resolved).'),
    plate_smoothing: z.boolean().describe('Effective smoothing.'),
    plate_mask_only: z.boolean().describe('Effective `plate_mask_only`.'),
    quota: QuotaSnapshot.optional().describe('Balance of the paying account; absent for the master key.'),
    // `status` stays where the legacy fields put it, as in `jobEnvelope`.
    ...Job.omit({ status: true }).shape,
  })
  .describe(
    'The job envelope: the Job resource (spec 2.2) and the legacy final-job fields (2.3) side by side in one ' +
      'flat object, so a legacy poller reads `result`, `status`, `url` at the top and a new client reads `id`, ' +
      '`operation`, `output`, `links`. `status` means the same in both. Webhooks deliver the same JSON.',
  );
