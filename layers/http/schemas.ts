/**
 * The OpenAPI document (layers/http/openapi.ts) is generated from the zod schemas here: request bodies
 * (read as their input type), response bodies (output type), and the parameters of the routes.
 * Requests and parameters are the run-time schemas themselves (layers/core), described here; responses
 * are defined here, and the integration tests check every real response against them.
 * A schema becomes `#/components/schemas/<key>` by being an entry of `requestSchemas` or
 * `responseSchemas` below; anything it nests that is itself an entry of the same map is a `$ref`.
 */
import { z } from 'zod';
import { BATCH_ACTIONS, BATCH_STATUSES, ITEM_STATUSES, PAUSE_REASONS } from '#core/batches/batch.ts';
import { BATCH_OPERATIONS, BatchInputSchema, DownloadBatchQuery } from '#core/batches/input.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '#core/idempotency/idempotency.ts';
import { JobInputSchema, LEGACY_PROCESS_MODES } from '#core/jobs/input.ts';
import { BACKGROUND_PRESETS, JOB_STAGES, JOB_STATUSES, OPERATIONS } from '#core/jobs/job.ts';
import { BOOLEAN_SPELLINGS, PLATE_COLOR_NAMES } from '#core/jobs/params.ts';
import { UPLOAD_CONTENT_TYPES } from '#core/uploads/upload.ts';
import { WebhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { ListJobsQuery } from '#core/use-cases/list-jobs.ts';
import { UploadRequestSchema } from '#core/use-cases/uploads.ts';
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
const timestamp = z.string().meta({ format: 'date-time' });
const cursor = z.int().nullable().meta({
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
function documented<T extends z.ZodType>(schema: T, meta: z.core.GlobalMeta): T {
  z.globalRegistry.add(schema, meta);
  return schema;
}

const colourValues = {
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
  description:
    'The operation. `plate` hides the licence plate; `background` replaces the background without ' +
    'hiding the plate; `studio_background` replaces it with a preset, `background_file` or the key’s ' +
    'stored background; `plate_mask` and `background_mask` return the mask only; `analyze` classifies ' +
    'the photo (1 credit; every other operation costs 5).',
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
    'Background preset. `background_file` takes priority over it; without either, the key’s stored ' +
    'background is used, then `studio`.',
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

const JobInputForm = JobInput.extend(uploads).describe(
  'Job input as `multipart/form-data`: the fields of `JobInput` plus the uploads `file` and ' +
    '`background_file`. Booleans arrive as text, in any of the accepted spellings.',
);

/**
 * `/process` checks its modes in `parseJobRequest` (the handler passes `LEGACY_PROCESS_MODES`), so its
 * `mode` is the one field documented by a schema of its own, built from that constant.
 */
const LegacyProcessForm = JobInputForm.omit({ asset_id: true })
  .extend({
    mode: z
      .enum(LEGACY_PROCESS_MODES)
      .default('plate')
      .describe('`plate` hides the plate; `studio_background` replaces the background.'),
  })
  .describe(
    'Legacy `/process` form: the fields of 2.1, with `mode` limited to `plate` and `studio_background`.',
  );

const LegacyAnalyzeForm = JobInputForm.pick({ file: true, url: true }).describe(
  'Legacy `/analyze` form: the source as `file` or `url`.',
);

const batch = BatchInputSchema.shape;
documented(batch.upload_id, {
  description: 'Id of a completed direct upload of a ZIP archive (POST /uploads); instead of `archive`.',
});
documented(batch.mode, {
  description: 'Operation applied to every photo; `analyze` is not accepted for batches.',
});
documented(batch.background, { description: 'Background preset.' });
documented(batch.plate_color, {
  ...colourValues,
  description: 'Fill colour of the plate, `#RRGGBB` (the legacy names are accepted as for jobs).',
});

const BatchForm = BatchInputSchema.extend({
  archive: z
    .file()
    .mime(['application/zip'])
    .optional()
    .describe(
      'ZIP archive of JPG, PNG or WEBP photos, in folders if you like (the download keeps them). At most ' +
        '1000 files, 50 MB per file and 4 GB in all once inflated, no entry more than 100 times its ' +
        'compressed size (above 1 MB); stored or deflated entries, ZIP64 too. Entries named with `..`, an ' +
        'absolute path or a drive letter, and links, refuse the whole archive (400). Directories, ' +
        '`__MACOSX/` and dotfiles are ignored; other files, nested archives, unreadable entries and photos ' +
        'over 40 MB become skipped items. The request itself is limited as every request (413 over 6 MB): ' +
        'larger archives (up to 2 GB) go through POST /uploads and `upload_id`. Send `archive` or `upload_id`.',
    ),
}).describe(
  'A batch upload (POST /batches). Not idempotent: every upload is a new batch. Item jobs take the key’s ' +
    'stored defaults where a field is not sent, but send no webhook each: the batch sends one when it ends.',
);

/** The same fields as JSON, where `parseBatchRequest` needs `upload_id` since no file can come along. */
const BatchInput = BatchInputSchema.meta({
  required: ['upload_id'],
  description: 'A batch of an archive sent by direct upload (POST /uploads), as JSON.',
});

const upload = UploadRequestSchema.shape;
documented(upload.content_type, {
  // Any other type is refused with 415 by the use case, after the schema.
  enum: Object.keys(UPLOAD_CONTENT_TYPES),
  description: 'Type of the file; the PUT must send exactly this `Content-Type` (it is signed).',
});
documented(upload.filename, { description: 'The file’s name, kept as the source’s original name.' });
documented(upload.size, {
  description:
    'Exact size in bytes; the PUT must send exactly this many (Content-Length is signed). At most ' +
    '40 MB for a photo, 2 GB for an archive (413 over).',
});
const UploadRequest = documented(UploadRequestSchema, {
  description: 'A direct upload to open (POST /uploads), as JSON or as a form.',
});

documented(WebhookUpdateSchema.shape.webhook_url, {
  description:
    'Default webhook of the key, used for every new job without a `webhook_url` of its own: an http(s) ' +
    'URL, or empty to disable it. Private, loopback and link-local addresses are refused.',
});
const WebhookUpdate = documented(WebhookUpdateSchema, {
  description: 'New webhook setting, as JSON or as a form.',
});
/** Request bodies, by component name. */
export const requestSchemas = {
  JobInput,
  JobInputForm,
  LegacyProcessForm,
  LegacyAnalyzeForm,
  BatchForm,
  BatchInput,
  UploadRequest,
  WebhookUpdate,
};

// ---------------------------------------------------------------- response bodies (output type)

const JobStatus = z
  .enum(JOB_STATUSES)
  .describe(
    'Job status. `queued` → `processing` → `success` or `failed`; `cancelled` by the owner. Clients stop ' +
      'polling on `success`, `failed` or `cancelled`.',
  );
const Operation = z.enum(OPERATIONS).describe('The operation (`mode` of the job input).');
const JobStage = z
  .enum(JOB_STAGES)
  .describe(
    'Where in the pipeline the job is, finer than `status`: `queued`, `preparing`, `inference`, ' +
      '`settling`, `done` (a finished job, whatever its outcome).',
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
    plates_detected: z.int().optional(),
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

const Job = z
  .object({
    id: z.string().describe('Job id, `job_` and 24 random characters.'),
    status: JobStatus,
    operation: Operation,
    stage: JobStage,
    cancel_requested: z.boolean().describe('Cooperative cancellation of a processing job was requested.'),
    cost_credits: z.number().describe('Credits charged or reserved: 5, or 1 for `analyze`.'),
    attempts: z.int().describe('Workflow executions started for this job.'),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    output: JobOutput.nullable(),
    error: JobError.nullable(),
    links: JobLinks,
  })
  .describe('The Job resource (spec 2.2).');

const JobEnvelope = z
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
      .enum([...BACKGROUND_PRESETS, 'custom'])
      .nullable()
      .describe('Effective background: a preset, or `custom` when a background file was used.'),
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

const JobList = z
  .object({ jobs: z.array(Job), next_cursor: cursor })
  .describe('A page of the caller’s jobs, newest first.');

const statusUrl = z.string().describe('Path of the job, `/api/v1/jobs/{job_id}`; poll it with GET.');

const LegacyProcessCreated = z
  .object({
    result: z.boolean(),
    queued: z.boolean(),
    code: z.int().describe('202'),
    message: z.string(),
    cost_credits: z.number(),
    job_id: z.string(),
    status: JobStatus.describe('`queued`'),
    status_url: statusUrl,
    webhook_enabled: z
      .boolean()
      .describe('A webhook (the job’s own or the key’s default) will receive the final job.'),
    quota: z
      .object({
        remaining: z.number().nullable().describe('Credits available; null for the master key.'),
        credits_remaining: z.number().nullable().describe('Same as `remaining` (legacy name).'),
        process_credit_cost: z.number().describe('5'),
        classification_credit_cost: z.number().describe('1'),
      })
      .describe('Balance and prices.'),
  })
  .describe('Legacy creation response of `/process` (spec 2.3).');

const LegacyAnalyzeCreated = LegacyProcessCreated.pick({
  result: true,
  queued: true,
  code: true,
  cost_credits: true,
  job_id: true,
  status: true,
  status_url: true,
}).describe('Legacy creation response of `/analyze` (spec 2.3); the analysis arrives with the finished job.');

const Asset = z
  .object({
    asset_id: z.string().describe('Reference it as `asset_id` in a job input.'),
    expires_at: timestamp,
    original_name: z.string(),
  })
  .describe('A stored source image (spec 2.5).');

const FileItem = z
  .object({
    file_id: z.int().min(1).describe('Increasing with every new file; also the listing cursor.'),
    kind: z.enum(['asset', 'result']),
    name: z.string(),
    content_type: z.string(),
    bytes: z.int(),
    url: z
      .string()
      .nullable()
      .describe('Result path for a result (served like a job’s `url`); null for an asset.'),
    job_id: z.string().nullable().describe('The job of a result; null for an asset.'),
    asset_id: z.string().nullable().describe('The asset id; null for a result.'),
    created_at: timestamp,
    expires_at: timestamp,
  })
  .describe('Something the service stores for the caller (spec 2.6): an uploaded asset or a job’s result.');

const FileList = z
  .object({ files: z.array(FileItem), next_cursor: cursor })
  .describe('A page of the caller’s files (an administrator sees every file).');

const ResultFlag = z.object({ result: z.boolean() }).describe('Outcome of an operation without a body.');

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

const Batch = z
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
          '5 credits; top up and resume), `too_many_jobs` (the account’s other jobs hold every slot).',
      ),
    mode: z.enum(BATCH_OPERATIONS),
    background: z.enum([...BACKGROUND_PRESETS, 'custom']).nullable(),
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
const UploadCreated = z
  .object({
    upload_id: z
      .string()
      .describe('`upl_` and 24 random characters; name it as `upload_id` once the PUT is done.'),
    url: z
      .string()
      .describe('Presigned storage URL: send the file there, once, with `method` and `headers`.'),
    method: z.literal('PUT'),
    headers: z
      .object({ 'content-type': z.string() })
      .describe('Headers the PUT must carry; Content-Length must be `max_bytes` (both are signed).'),
    max_bytes: z.int().describe('The declared size: the PUT must send exactly this many bytes.'),
    expires_at: timestamp.describe('The URL works until then (1 hour).'),
    usable_until: timestamp.describe(
      'The upload can be named as `upload_id` until then (24 hours), by any number of requests; then 410.',
    ),
  })
  .describe('A direct upload: where to PUT the file, and the id to name it by afterwards.');

const BatchCreated = z
  .object({
    batch: Batch,
    status_url: z.string().describe('Path of the batch, `/api/v1/batches/{batch_id}`.'),
  })
  .describe('A new batch: its first photos are already starting.');
const BatchDownloadLink = z
  .object({
    url: z.string().describe('Presigned storage link to the ZIP archive; needs no key.'),
    expires_in_seconds: z.int().describe('The link works this long (900).'),
  })
  .describe('Where to download the results of a batch (GET /batches/{batch_id}/download as JSON).');
const BatchEnvelope = z
  .object({ batch: Batch })
  .describe('A batch, as GET and the control actions answer it.');

const balance = (description: string) =>
  z.number().nullable().describe(`${description}; null for the master key.`);
const Quota = z
  .object({
    result: z.boolean(),
    quota: z.object({
      active: z.boolean(),
      authorized: z.boolean().describe('False for a guest session.'),
      remaining: balance('Credits available'),
      credits_remaining: balance('Same as `remaining`'),
      user_credits_remaining: balance('Same as `remaining`'),
      process_credit_cost: z.number().describe('5'),
      classification_credit_cost: z.number().describe('1'),
      used_total: balance('Credits charged so far'),
      unlimited: z.literal(true).optional().describe('Present for the master key, which deducts no credits.'),
    }),
  })
  .describe(
    'Credit balance of the caller (spec 2.9): an API key’s account or the guest session’s trial balance.',
  );

const WebhookSetting = z
  .object({
    result: z.boolean(),
    code: z.int(),
    message: z.string(),
    webhook_url: z.string().describe('The stored URL; empty when disabled.'),
    webhook_enabled: z.boolean(),
  })
  .describe('The key’s default webhook (spec 2.8). The master key does not store one.');

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

const WebhookDelivery = z
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

const DeliveryLog = z
  .object({
    job_id: z.string(),
    webhook_url: z
      .string()
      .nullable()
      .describe('The job’s webhook: its own `webhook_url` or the key’s default.'),
    deliveries: z.array(WebhookDelivery).describe('Newest first.'),
  })
  .describe('The webhook delivery log of a job.');

const ErrorBody = z
  .object({
    code: z.int().describe('The HTTP status, or for 422 the reason: 800, 802 or 803.'),
    message: z.string(),
    result: z.literal(false),
  })
  .describe('Every error answers with this body (spec 2.10).');

const OpenApiDocument = z
  .object({ openapi: z.string() })
  .describe('This OpenAPI 3.1 document (also committed as docs/openapi.json).');

/** Response bodies, by component name. */
export const responseSchemas = {
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
  JobList,
  LegacyProcessCreated,
  LegacyAnalyzeCreated,
  Asset,
  FileItem,
  FileList,
  ResultFlag,
  Batch,
  BatchItem,
  BatchCreated,
  BatchEnvelope,
  BatchDownloadLink,
  UploadCreated,
  Quota,
  WebhookSetting,
  DeliveryAttempt,
  WebhookDelivery,
  DeliveryLog,
  ErrorBody,
  OpenApiDocument,
};

export type SchemaName = keyof typeof requestSchemas | keyof typeof responseSchemas;

// ---------------------------------------------------------------- parameters

/** Query parameters of GET /jobs: the schema the use case parses with. */
documented(ListJobsQuery.shape.limit, { description: 'Page size.' });
documented(ListJobsQuery.shape.before, {
  format: 'int64',
  description: 'Cursor: `next_cursor` of the previous page.',
});
documented(ListJobsQuery.shape.status, { description: 'Only jobs with this status.' });
export const listJobsQuery = ListJobsQuery;

/** Query parameters of GET /files, as `parsePageQuery` (layers/core/files/files.ts) reads them. */
export const listFilesQuery = z.object({
  limit: ListJobsQuery.shape.limit,
  before: z.int().min(0).optional().describe('Cursor: `next_cursor` of the previous page (a `file_id`).'),
});

/** Query of GET /batches/{batch_id}/download: the schema its handler parses with. */
documented(DownloadBatchQuery.shape.partial, {
  enum: BOOLEAN_SPELLINGS,
  default: false,
  description: 'Also while the batch is processing or paused: the results ready so far (any case).',
});
export const downloadBatchQuery = DownloadBatchQuery;

/** Every path parameter of the route table, by name; the handlers of `name` and `action` check with these. */
export const pathParameters = {
  job_id: z
    .string()
    .describe('Job id.')
    .meta({ examples: ['job_0123456789abcdefghjkmnpq'] }),
  name: z
    .string()
    .regex(/^[a-z_]+\.(jpg|png|webp)$/)
    .describe('File name of the result, as in the job’s `url`, `plate_mask_url`, ...'),
  file_id: z.int().min(1).describe('File id.'),
  batch_id: z
    .string()
    .describe('Batch id.')
    .meta({ examples: ['bat_0123456789abcdefghjkmnpq'] }),
  action: z.enum(BATCH_ACTIONS).describe('Batch control operation.'),
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

export { UploadCreated, UploadRequest };
