/**
 * Examples of the OpenAPI document: what a request and its answer look like, for the reference at /docs.
 * They are data, not types: the unit test parses each one with the schema it illustrates (unknown fields
 * included), so an example that drifts from the contract fails the build.
 */
type Json = Record<string, unknown>;

export interface Example {
  summary: string;
  value: unknown;
}

/** Examples of one media type, by name, and the schema component they must satisfy. */
export interface ExampleSet {
  /** A schema component of the document (shared or of an endpoint). */
  schema: string;
  examples: Record<string, Example>;
}

export interface OperationExamples {
  /** By media type of the request body. */
  request?: Record<string, ExampleSet>;
  /** By status, for the success answers (application/json). */
  responses?: Record<number, ExampleSet>;
}

const JOB_ID = 'job_7kq2m9x4c8v1b6n3p5r0t2wz';
const BATCH_ID = 'bat_4n8c2v6x1z3q5w7e9r0t2y4u';
const jobPath = `/api/v1/jobs/${JOB_ID}`;
const resultPath = (name: string) => `/api/v1/results/${JOB_ID}/${name}`;

const links = (result?: string) => ({
  self: jobPath,
  cancel: `${jobPath}/cancel`,
  retry: `${jobPath}/retry`,
  ...(result ? { result } : {}),
});

const params = {
  background: 'studio',
  plate_color: '#141414',
  plate_smoothing: true,
  plate_mask_only: false,
};

const queuedPlateJob = {
  result: true,
  job_id: JOB_ID,
  status: 'queued',
  code: 202,
  mode: 'plate',
  ...params,
  quota: { remaining: 95, credits_remaining: 95 },
  id: JOB_ID,
  operation: 'plate',
  stage: 'queued',
  cancel_requested: false,
  cost_credits: 5,
  attempts: 0,
  created_at: '2026-11-24T09:30:00.000Z',
  started_at: null,
  finished_at: null,
  output: null,
  error: null,
  links: links(),
};

const succeededPlateJob = {
  ...queuedPlateJob,
  status: 'success',
  code: 200,
  url: resultPath('result.jpg'),
  expires_in_days: 30,
  stage: 'done',
  attempts: 1,
  started_at: '2026-11-24T09:30:00.412Z',
  finished_at: '2026-11-24T09:30:02.871Z',
  output: {
    url: resultPath('result.jpg'),
    output_kind: 'image',
    inference_cached: false,
    model_version: { plate_detector: 'lpd-yunet-2023mar-dynamic' },
    plates_detected: 1,
  },
  links: links(resultPath('result.jpg')),
};

const analysis = {
  photo_type: { value: 'exterior', label: 'Exterior', source_class: 'car', conf: 99 },
  view: { value: 'three_quarters_left', label: 'Front three-quarter left', conf: 91 },
  detections: { car: { id: 2, conf: 93 }, license_plate: { id: 1000, conf: 88 } },
  background_detections: { person: { id: 0, conf: 41 } },
};

const analyzedJob = {
  ...queuedPlateJob,
  status: 'success',
  code: 200,
  analysis,
  mode: 'analyze',
  quota: { remaining: 94, credits_remaining: 94 },
  operation: 'analyze',
  stage: 'done',
  cost_credits: 1,
  attempts: 1,
  started_at: '2026-11-24T09:30:00.398Z',
  finished_at: '2026-11-24T09:30:01.502Z',
  output: {
    analysis,
    output_kind: 'analysis',
    inference_cached: false,
    model_version: {
      car_detector: 'nanodet-plus-2022nov',
      feature_extractor: 'mobilenetv2-12-int8',
      analyze_head: 'analyze-head-2025.4',
      plate_detector: 'lpd-yunet-2023mar-dynamic',
    },
  },
};

const failedJob = {
  ...queuedPlateJob,
  result: false,
  status: 'failed',
  code: 803,
  message: 'No license plate was detected in the photo',
  quota: { remaining: 100, credits_remaining: 100 },
  stage: 'done',
  attempts: 1,
  started_at: '2026-11-24T09:30:00.405Z',
  finished_at: '2026-11-24T09:30:01.118Z',
  error: { code: 803, message: 'No license plate was detected in the photo' },
};

const { result: _r, job_id: _j, code: _c, mode: _m, quota: _q, ...paramsAndResource } = succeededPlateJob;
const {
  background: _b,
  plate_color: _pc,
  plate_smoothing: _ps,
  plate_mask_only: _pm,
  ...resource
} = paramsAndResource;
const { url: _u, expires_in_days: _e, ...plateResource } = resource;

const batch = (state: 'unpacking' | 'completed') => {
  const done = state === 'completed';
  const names = ['front.jpg', 'side/left.jpg', 'rear.jpg'];
  const jobIds = [
    'job_2c4v6b8n0m1q3w5e7r9t1y3u',
    'job_5t7y9u1i3o5p7a9s1d3f5g7h',
    'job_8k0l2z4x6c8v0b2n4m6q8w0e',
  ];
  // Items appear once the archive is unpacked.
  const items = done
    ? names.map((name, index) => ({
        index,
        name,
        status: 'succeeded',
        job_id: jobIds[index]!,
        attempts: 1,
        error: null,
        result: `/api/v1/results/${jobIds[index]}/result.jpg`,
      }))
    : [];
  const path = `/api/v1/batches/${BATCH_ID}`;
  return {
    id: BATCH_ID,
    status: state,
    pause_reason: null,
    mode: 'plate',
    background: 'studio',
    plate_color: '#141414',
    concurrency: 2,
    counts: {
      total: 3,
      skipped: 0,
      queued: 0,
      processing: 0,
      succeeded: done ? 3 : 0,
      failed: 0,
      cancelled: 0,
    },
    cost_credits: done ? 15 : 0,
    reserved_credits: 0,
    archive: { name: 'cars.zip', bytes: 1_482_113 },
    error: null,
    created_at: '2026-11-24T09:31:00.000Z',
    started_at: done ? '2026-11-24T09:31:00.920Z' : null,
    finished_at: done ? '2026-11-24T09:31:08.940Z' : null,
    items,
    links: {
      self: path,
      pause: `${path}/pause`,
      resume: `${path}/resume`,
      cancel: `${path}/cancel`,
      retry: `${path}/retry`,
      download: `${path}/download`,
    },
  };
};

const one = (schema: string, summary: string, value: unknown): ExampleSet => ({
  schema,
  examples: { [exampleName(summary)]: { summary, value } },
});
const exampleName = (summary: string) =>
  summary
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

const webhookSetting = (url: string): Json => ({
  result: true,
  code: 200,
  message: url ? 'Webhook saved' : 'Webhook disabled',
  webhook_url: url,
  webhook_enabled: Boolean(url),
});

/** Keyed like ROUTE_CONTRACTS (functions/api/openapi.ts) (layers/http/openapi/): `METHOD path` without the `/api/v1` prefix. */
export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  'POST /jobs': {
    request: {
      'application/json': {
        schema: 'JobInput',
        examples: {
          plate_from_url: {
            summary: 'Hide the plate of a photo on the web, with a one-off webhook',
            value: {
              mode: 'plate',
              url: 'https://images.example.com/cars/estate-front.jpg',
              plate_color: '#141414',
              webhook_url: 'https://hooks.example.com/photo-jobs',
            },
          },
          studio_from_asset: {
            summary: 'Studio background for an uploaded asset',
            value: {
              mode: 'studio_background',
              asset_id: 'ast_3v5b7n9m1q3w5e7r9t1y3u5i',
              background: 'showroom',
            },
          },
        },
      },
    },
    responses: {
      202: one('JobCreated', 'A plate job, queued', {
        ...queuedPlateJob,
        status_url: `/api/v1/jobs/${queuedPlateJob.job_id}`,
      }),
      200: one('JobEnvelope', 'Replay of a finished job (same Idempotency-Key and body)', succeededPlateJob),
    },
  },
  'GET /jobs': {
    responses: {
      200: one('JobList', 'The newest job and the cursor of the next page', {
        jobs: [plateResource],
        next_cursor: 1764063000000001,
      }),
    },
  },
  'GET /jobs/{job_id}': {
    responses: {
      200: {
        schema: 'JobEnvelope',
        examples: {
          plate_succeeded: { summary: 'A plate hidden', value: succeededPlateJob },
          analysis_succeeded: { summary: 'A photo analysed', value: analyzedJob },
          plate_failed: { summary: 'No plate in the photo (credits given back)', value: failedJob },
        },
      },
    },
  },
  'POST /jobs/{job_id}/cancel': {
    responses: {
      200: one('JobEnvelope', 'A queued job, cancelled', {
        ...queuedPlateJob,
        result: false,
        status: 'cancelled',
        code: 409,
        message: 'Job was cancelled',
        quota: { remaining: 100, credits_remaining: 100 },
        stage: 'done',
        finished_at: '2026-11-24T09:30:00.310Z',
      }),
    },
  },
  'POST /batches': {
    responses: {
      202: one('BatchCreated', 'Three photos, being unpacked', {
        batch: batch('unpacking'),
        status_url: `/api/v1/batches/${BATCH_ID}`,
      }),
    },
  },
  'GET /batches/{batch_id}': {
    responses: { 200: one('BatchEnvelope', 'A completed batch', { batch: batch('completed') }) },
  },
  'POST /assets': {
    responses: {
      201: one('Asset', 'A stored photo', {
        asset_id: 'ast_3v5b7n9m1q3w5e7r9t1y3u5i',
        expires_at: '2026-12-01T09:30:00.000Z',
        original_name: 'estate-front.jpg',
      }),
    },
  },
  'GET /quota': {
    responses: {
      200: one('Quota', 'An API key with 95 credits left', {
        result: true,
        quota: {
          active: true,
          authorized: true,
          remaining: 95,
          credits_remaining: 95,
          user_credits_remaining: 95,
          process_credit_cost: 5,
          classification_credit_cost: 1,
          used_total: 5,
        },
      }),
    },
  },
  'GET /webhook': {
    responses: {
      200: one('WebhookSetting', 'A default webhook', {
        ...webhookSetting('https://hooks.example.com/photo-jobs'),
        message: 'Current webhook setting',
      }),
    },
  },
  'PUT /webhook': {
    request: {
      'application/json': one('WebhookUpdate', 'Set the default webhook', {
        webhook_url: 'https://hooks.example.com/photo-jobs',
      }),
    },
    responses: {
      200: one('WebhookSetting', 'Saved', webhookSetting('https://hooks.example.com/photo-jobs')),
    },
  },
  'DELETE /webhook': {
    responses: { 200: one('WebhookSetting', 'Disabled', webhookSetting('')) },
  },
};

/** One example per error response component (by its name in OpenAPI), with messages the service sends. */
export const ERROR_EXAMPLES: Record<string, Example> = {
  BadRequest: {
    summary: 'Two sources',
    value: { code: 400, message: 'Send exactly one of file, url, asset_id or upload_id', result: false },
  },
  Unauthorized: {
    summary: 'A wrong key',
    value: { code: 401, message: 'The API key is not valid or has been disabled', result: false },
  },
  PaymentRequired: {
    summary: 'Not enough credits',
    value: { code: 402, message: 'This operation needs 5 credits; 3 are available', result: false },
  },
  NotFound: {
    summary: 'Unknown or foreign job',
    value: { code: 404, message: `Job ${JOB_ID} does not exist`, result: false },
  },
  UnprocessableContent: {
    summary: 'No plate',
    value: { code: 803, message: 'No license plate was detected in the photo', result: false },
  },
};

/** Puts the examples into a built document (by reference to its paths and components). */
export function addExamples(document: { paths: Record<string, Json>; components?: Json }): void {
  for (const [key, examples] of Object.entries(OPERATION_EXAMPLES)) {
    const [method, path] = key.split(' ') as [string, string];
    const operation = document.paths[path]?.[method.toLowerCase()] as Json | undefined;
    if (!operation) throw new Error(`Examples for ${key}, which the document does not have`);
    for (const [mediaType, set] of Object.entries(examples.request ?? {})) {
      const content = (operation.requestBody as { content?: Record<string, Json> } | undefined)?.content;
      if (!content?.[mediaType])
        throw new Error(`Examples for a ${mediaType} body that ${key} does not take`);
      content[mediaType].examples = set.examples;
    }
    for (const [status, set] of Object.entries(examples.responses ?? {})) {
      const response = (operation.responses as Record<string, Json>)[status] as
        | { content?: Record<string, Json> }
        | undefined;
      const media = response?.content?.['application/json'];
      if (!media) throw new Error(`Examples for a ${status} answer that ${key} does not give as JSON`);
      media.examples = set.examples;
    }
  }
  const responses = (document.components?.responses ?? {}) as Record<
    string,
    { content: Record<string, Json> }
  >;
  for (const [name, example] of Object.entries(ERROR_EXAMPLES)) {
    const media = responses[name]?.content['application/json'];
    if (!media)
      throw new Error(`An example for the error response ${name}, which the document does not have`);
    media.examples = { [exampleName(example.summary)]: example };
  }
}
