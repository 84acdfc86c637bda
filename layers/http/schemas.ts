/**
 * The schemas several endpoints share: the job input (POST /jobs, /assets and the legacy forms), the job
 * and batch resources, the webhook delivery, the error body, the path parameters of more than one route.
 * What one endpoint alone uses is in its `functions/api/<endpoint>/schema.ts`. Requests and parameters
 * are the run-time schemas themselves (layers/core), described here; responses are defined here, and the
 * integration tests check every real response against them.
 * A schema becomes `#/components/schemas/<key>` by being an entry of `sharedRequestSchemas` or
 * `sharedResponseSchemas` below (or of an endpoint's contract); anything it nests that is itself a
 * component of the same kind is a `$ref`.
 */
import { z } from 'zod';
import { BATCH_STATUSES, ITEM_STATUSES, PAUSE_REASONS } from '#core/batches/batch.ts';
import { BATCH_OPERATIONS } from '#core/batches/input.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '#core/idempotency/idempotency.ts';
import { JOB_ID_PATTERN } from '#core/jobs/ids.ts';
import { JobInputSchema } from '#core/jobs/input.ts';
import { BACKGROUNDS, FRAMINGS, JOB_STAGES, JOB_STATUSES, MAX_WIDTH_RANGE } from '#core/jobs/job.ts';
import { credits, modeDescription, OPERATION_NAMES, PRICES } from '#core/jobs/operations.ts';
import { BOOLEAN_SPELLINGS, PLATE_COLOR_NAMES } from '#core/jobs/params.ts';
import { WEBHOOK_EVENTS } from '#core/webhooks/delivery.ts';

export { BOOLEAN_SPELLINGS };

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];

const resultUrl = z
  .string()
  .describe(
    'Path of the result image, `/api/v1/results/{job_id}/{name}`, relative to the service address. It needs ' +
      'no key (the 120-bit random job id is the capability, so `<img src>` and plain downloads work) and ' +
      'answers 302 to a presigned storage link valid 15 minutes. Results are kept 30 days.',
  );
const resultPath = (what: string) => z.string().describe(`Path of the ${what}; served like \`url\`.`);
export const timestamp = z.string().meta({ format: 'date-time' });
export const cursor = z.int().nullable().meta({
  format: 'int64',
  description: 'Pass as `before` to read the next page; null on the last page.',
});
const imageFile = (description: string) => z.file().mime(IMAGE_TYPES).describe(description);

// ---------------------------------------------------------------- request bodies (input type)

/**
 * A request schema is the very object that validates at run time (layers/core); this file only
 * describes it. The description goes into zod's global registry, keyed by that object, so nothing here
 * copies a field and the unit test can check identity. A field that normalises with a transform gets
 * the values it accepts as JSON Schema too, since zod cannot show what a transform takes.
 */
export function documented<T extends z.ZodType>(schema: T, meta: z.core.GlobalMeta): T {
  z.globalRegistry.add(schema, meta);
  return schema;
}

export const colourValues = {
  anyOf: [
    { type: 'string', pattern: HEX_COLOR.source },
    { type: 'string', enum: PLATE_COLOR_NAMES },
  ],
};
const booleanValues = {
  anyOf: [{ type: 'boolean' }, { type: 'string', enum: BOOLEAN_SPELLINGS }, { type: 'number', enum: [0, 1] }],
};

const job = JobInputSchema.shape;
documented(job.mode, {
  description: modeDescription(),
});
documented(job.url, {
  description:
    'Source image URL (http or https, up to 20 MB), used when no `file` is sent. The service downloads ' +
    'it; a URL that cannot be fetched is a 400.',
});
documented(job.asset_id, { description: 'Id of an asset uploaded earlier with POST /assets.' });
documented(job.upload_id, {
  description:
    'Id of a completed direct upload (POST /uploads, then PUT to its url): photos up to 40 MB ' +
    '(and 64 megapixels, as every photo), past the request size limit. Usable by any number of jobs of its owner for 24 hours.',
});
documented(job.background, {
  description:
    'Background preset, or `transparent`: the car alone as a PNG (or WEBP) with alpha, no shadow unless ' +
    '`shadow` is true. `background_file` takes priority over it; without either, the key’s stored ' +
    'background is used, then `studio`.',
});
documented(job.format, {
  description:
    'Encoding of the result image: `jpg` (quality 92), `png`, `webp` (quality 90, alpha kept). Not sent: ' +
    'JPEG for JPEG and WEBP photos, PNG for PNG photos and for `background: transparent`. A mask operation ' +
    'gives PNG unless asked. `jpg` with `background: transparent` is a 400 (JPEG has no alpha).',
});
documented(job.max_width, {
  ...{
    anyOf: [
      { type: 'integer', minimum: MAX_WIDTH_RANGE.min, maximum: MAX_WIDTH_RANGE.max },
      { type: 'string', pattern: '^[0-9]+$' },
    ],
  },
  description:
    `Largest width of the result in pixels (${MAX_WIDTH_RANGE.min}–${MAX_WIDTH_RANGE.max}); a wider result ` +
    'is scaled down, keeping its proportions, with its masks. Never enlarged. Not sent: the photo’s width.',
});
documented(job.framing, {
  description:
    '`background` and `studio_background`: `center` scales the car to fill 80% of the frame’s width (at ' +
    'most 72% of its height, never more than 2.5 times enlarged), centred, its wheels on a floor line at ' +
    '88% of the height with the shadow under them; `keep` leaves it where the photo has it. A car cut by ' +
    'the photo’s edge keeps its framing, and `output.composition` says so. Not sent: `center` for ' +
    '`studio_background`, `keep` for `background`.',
});
documented(job.shadow, {
  ...booleanValues,
  description:
    'Background operations: the car’s floor shadow. Not sent: on over a backdrop, off for ' +
    '`background: transparent` (true gives a soft black shadow on alpha under the cut-out).',
});
documented(job.plate_color, {
  ...colourValues,
  description:
    'Fill colour of the plate, `#RRGGBB`. The legacy names are accepted too: `black` = `#000000`, ' +
    '`white` = `#ffffff`, `graphite` = `#141414` (also the service default). Falls back to the key’s setting.',
});
documented(job.plate_smoothing, {
  ...booleanValues,
  default: true,
  description:
    'Align and soften the plate fill’s edges. Accepts `true`/`false`, `1`/`0`, `smooth`/`raw` and also ' +
    '`yes`/`no`, `on`/`off` (any case). Falls back to the key’s setting, then true.',
});
documented(job.plate_mask_only, {
  ...booleanValues,
  default: false,
  description:
    'Fill strictly by the detected mask, with no edge alignment or softening. Same spellings as ' +
    '`plate_smoothing`. Falls back to the key’s setting, then false.',
});
documented(job.require_plate, {
  ...booleanValues,
  default: false,
  description:
    '`studio_background` (and `plate`, which always requires one): fail with 803 and refund, instead of ' +
    'succeeding, when the car looks like its front or rear but no plate was found to hide ' +
    '(`plate_hidden: false`). Same spellings as `plate_smoothing`.',
});
documented(job.webhook_url, {
  description:
    'One-off webhook for this job; overrides the key’s default. It receives the final job as a POST.',
});

const JobInput = documented(JobInputSchema, {
  description:
    'Job input (spec 2.1). Send exactly one source: `file` (multipart only), `url`, `asset_id` or `upload_id`. ' +
    'Parameters in the request override the key’s stored defaults. Empty form fields count as not sent.',
});

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

/** Request bodies several endpoints take, by component name. */
export const sharedRequestSchemas = { JobInput, JobInputForm };

// ---------------------------------------------------------------- response bodies (output type)

export const JobStatus = z
  .enum(JOB_STATUSES)
  .describe(
    'Job status. `queued` → `processing` → `success` or `failed`; `cancelled` by the owner. Clients stop ' +
      'polling on `success`, `failed` or `cancelled`.',
  );
const Operation = z.enum(OPERATION_NAMES).describe('The operation (`mode` of the job input).');
const JobStage = z
  .enum(JOB_STAGES)
  .describe(
    'Where in the pipeline the job is, finer than `status`: `queued` (created, or queued again by a ' +
      'retry), `preparing` (started: the photo is prepared and the models run), `done` (a finished job, ' +
      'whatever its outcome).',
  );

const AnalysisLabel = z
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
const Analysis = z
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
    car_cut_by_edge: z
      .array(z.enum(['left', 'right', 'top', 'bottom']))
      .describe('The photo’s edges that cut the car; when any does, the car was not re-framed.'),
    vehicles: z.int().describe('Distinct vehicles found in the photo, the kept one included; only it stays.'),
    main_car_ambiguous: z
      .boolean()
      .describe('Another vehicle was about as large as the kept one (85%): the more central one was kept.'),
    notes: z.array(z.string()).describe('The same decisions in words, for a person.'),
  })
  .describe('`background` and `studio_background`: where the car was put and what was decided for you.');

const JobOutput = z
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

const JobError = z
  .object({
    code: z
      .int()
      .describe(
        '803 no plate detected, 802 no background mask, 800 photo not classifiable, 400 source not a ' +
          'decodable image, 415 unsupported format, 500 internal (a missing model file is named in the message).',
      ),
    message: z.string(),
  })
  .describe('Why the job failed.');

const JobLinks = z
  .object({
    self: z.string().describe('`/api/v1/jobs/{job_id}`'),
    cancel: z.string().describe('POST here to cancel.'),
    retry: z.string().describe('POST here to retry a failed job.'),
    result: z.string().optional().describe('The result image (same as `url`), once there is one.'),
  })
  .describe('Related paths: `self`, `cancel`, `retry`, and `result` once there is a result image.');

const QuotaSnapshot = z
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
      .describe('Life of the result in days (30); present on success with a result file.'),
    mode: Operation,
    background: z
      .enum([...BACKGROUNDS, 'custom'])
      .nullable()
      .describe(
        'Effective background: a preset, `transparent`, or `custom` when a background file was used.',
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

const BatchCounts = z
  .object({
    total: z.int().describe('Files of the archive (directories and ignored entries not counted).'),
    skipped: z.int().describe('Entries that are not processed: not an image, a nested archive, unreadable.'),
    queued: z.int().describe('Photos waiting to start.'),
    processing: z.int().describe('Photos whose job is queued or processing now (at most `concurrency`).'),
    succeeded: z.int(),
    failed: z.int(),
    cancelled: z.int(),
  })
  .describe('Items by status; they always add up to `total`.');

const BatchItem = z
  .object({
    index: z.int().describe('Position of the file in the archive, from 0.'),
    name: z.string().describe('Its path in the archive, `/`-separated.'),
    status: z
      .enum(ITEM_STATUSES)
      .describe(
        '`queued` → `processing` → `succeeded` or `failed`; `cancelled` with its batch; `skipped` when the entry ' +
          'is not a photo that can be processed.',
      ),
    job_id: z
      .string()
      .nullable()
      .describe('The job of the current or last attempt; each attempt is an ordinary job of the caller.'),
    attempts: z.int().describe('Jobs run for this item (a retry of the batch adds one).'),
    error: JobError.nullable().describe(
      'Why it failed (as a job’s `error`) or was skipped: 415 not a JPG, PNG or WEBP, or a nested archive; ' +
        '400 unreadable entry; 413 larger than 20 MB.',
    ),
    result: z
      .string()
      .nullable()
      .describe('Path of the result image once it succeeded; served like a job’s `url`.'),
  })
  .describe('One file of the archive.');

export const Batch = z
  .object({
    id: z.string().describe('Batch id, `bat_` and 24 random characters.'),
    status: z
      .enum(BATCH_STATUSES)
      .describe(
        '`unpacking` while a workflow step reads the archive and stores its photos (items appear when it ' +
          'ends); `processing` starts photos while fewer than `concurrency` run; `paused` starts none and ' +
          'lets the running ones finish; `completed` once nothing waits or runs; `cancelled` by its owner; ' +
          '`failed` when the archive could not be unpacked (see `error`). See docs/decisions.md (Batches).',
      ),
    pause_reason: z
      .enum(PAUSE_REASONS)
      .nullable()
      .describe(
        'Why it is paused: `requested` by its owner, `insufficient_credits` (a photo could not reserve its ' +
          `${credits(PRICES.edit)}; top up and resume), \`too_many_jobs\` (the account’s other jobs hold every slot).`,
      ),
    mode: z.enum(BATCH_OPERATIONS),
    background: z.enum([...BACKGROUNDS, 'custom']).nullable(),
    plate_color: z.string(),
    concurrency: z.int().describe('Photos that run at once.'),
    counts: BatchCounts,
    cost_credits: z
      .number()
      .describe('Credits charged so far: 5 per succeeded photo (0 for the master key).'),
    reserved_credits: z.number().describe('Credits held now for the photos that are processing.'),
    archive: z.object({ name: z.string().nullable(), bytes: z.int() }).describe('The uploaded archive.'),
    error: z
      .object({ code: z.int(), message: z.string() })
      .nullable()
      .describe('Why the archive could not be unpacked, when `status` is `failed`; otherwise null.'),
    created_at: timestamp,
    started_at: timestamp.nullable().describe('When its first photo started.'),
    finished_at: timestamp.nullable(),
    items: z.array(BatchItem).describe('Every file of the archive, in archive order.'),
    links: z
      .object({
        self: z.string(),
        pause: z.string(),
        resume: z.string(),
        cancel: z.string(),
        retry: z.string(),
        download: z.string(),
      })
      .describe('The batch, its control actions (POST) and its download.'),
  })
  .describe('A batch (spec 2.7): the photos of one ZIP archive, each processed as an ordinary job.');
const BatchEnvelope = z
  .object({ batch: Batch })
  .describe('A batch, as GET and the control actions answer it.');

const DeliveryAttempt = z
  .object({
    attempt: z.int().min(1).describe('1, 2, ... within its delivery (`X-Service-Attempt`).'),
    at: timestamp.describe('When the attempt was sent.'),
    status_code: z
      .int()
      .nullable()
      .describe(
        'The receiver’s HTTP status; null when no answer came (timeout, refused address, connection error).',
      ),
    latency_ms: z.int().describe('From sending until the answer’s status arrived (or the attempt gave up).'),
    error: z
      .string()
      .nullable()
      .describe('Why the attempt failed (`HTTP 500`, a timeout, a redirect, ...); null when delivered.'),
    outcome: z.enum(['delivered', 'failed']).describe('Delivered means a 2xx answer.'),
  })
  .describe('One POST to the webhook: a line of the delivery log.');

export const WebhookDelivery = z
  .object({
    delivery_id: z
      .string()
      .describe('Sent as `X-Service-Delivery`; the same on every attempt of this delivery.'),
    event: z.enum(WEBHOOK_EVENTS).describe('Sent as `X-Service-Event`.'),
    trigger: z
      .enum(['workflow', 'redeliver'])
      .describe(
        '`workflow`: sent when the job finished, retried on the schedule; `redeliver`: asked for by the owner.',
      ),
    url: z.string().describe('Where it was sent.'),
    status: z
      .enum(['pending', 'delivered', 'failed'])
      .describe(
        '`pending` while retries remain; `failed` once the last attempt failed. The job is never affected.',
      ),
    created_at: timestamp,
    updated_at: timestamp,
    attempts: z.array(DeliveryAttempt),
  })
  .describe('The final job JSON on its way to the webhook, with every attempt made.');

const ErrorBody = z
  .object({
    code: z.int().describe('The HTTP status, or for 422 the reason: 800, 802 or 803.'),
    message: z.string(),
    result: z.literal(false),
  })
  .describe('Every error answers with this body (spec 2.10).');

/** Response bodies several endpoints answer (or nest), by component name. */
export const sharedResponseSchemas = {
  JobStatus,
  Operation,
  JobStage,
  Analysis,
  AnalysisLabel,
  JobOutput,
  JobError,
  JobLinks,
  QuotaSnapshot,
  Job,
  JobEnvelope,
  Batch,
  BatchItem,
  BatchEnvelope,
  DeliveryAttempt,
  WebhookDelivery,
  ErrorBody,
};

export type SharedSchemaName = keyof typeof sharedRequestSchemas | keyof typeof sharedResponseSchemas;

// ---------------------------------------------------------------- parameters

/** Path parameters of more than one route, by name; the others are in their endpoint's schema.ts. */
export const sharedPathParameters = {
  job_id: z
    .string()
    .regex(JOB_ID_PATTERN)
    .describe('Job id.')
    .meta({ examples: ['job_0123456789abcdefghjkmnpq'] }),
  batch_id: z
    .string()
    .describe('Batch id.')
    .meta({ examples: ['bat_0123456789abcdefghjkmnpq'] }),
} satisfies Record<string, z.ZodType>;

export const idempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .describe(
    'Send the same key with an identical body on a network retry, and no second job or reservation is made: ' +
      'a finished job is returned with 200, one still running with 202, and a different body under the same ' +
      'key is 409. Keys are scoped to the calling key and remembered 24 hours. "Identical" means the same ' +
      'route, mode, parameters and source (uploads are compared by content hash).',
  );
