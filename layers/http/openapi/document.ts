/**
 * What the OpenAPI document says beyond the endpoints' contracts: the API's description, its limits,
 * errors (spec section 7), security (spec section 5) and webhooks. Numbers, header names and the retry
 * schedule come from the constants the code runs on; ./generator.ts puts it together with the endpoints.
 */

import * as z from 'zod';
import { ASSET_REMEMBERED_DAYS, ASSET_TTL_DAYS } from '#core/files/asset-rules.ts';
import { IDEMPOTENCY_TTL_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from '#core/idempotency/idempotency.ts';
import { API_PREFIX } from '#core/jobs/envelope.ts';
import { RESULT_TTL_DAYS, SOURCE_TTL_DAYS } from '#core/jobs/expiry.ts';
import { PRICES } from '#core/jobs/operations.ts';
import { GUEST_COOKIE, GUEST_SESSION_SECONDS } from '#core/keys/guest-session.ts';
import {
  MAX_IMAGE_ASPECT,
  MAX_IMAGE_FRAMES,
  MAX_IMAGE_PIXELS,
  MAX_IMAGE_SIDE,
  MIN_IMAGE_SIDE,
} from '#core/limits/image.ts';
import { DEFAULT_GUEST_RATE, DEFAULT_KEY_RATE } from '#core/limits/rate.ts';
import {
  API_GATEWAY_PAYLOAD_BYTES,
  EVENT_OVERHEAD_BYTES,
  INTEGRATION_TIMEOUT_SECONDS,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
  MAX_FIELD_BYTES,
  MAX_FIELD_NAME_BYTES,
  MAX_FORM_FIELDS,
  MAX_FORM_FILES,
  MAX_FORM_PARTS,
  MAX_HEADER_BYTES,
  MAX_ID_CHARS,
  MAX_INLINE_BODY_BYTES,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
  MAX_URL_BYTES,
} from '#core/limits/request.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES, MAX_SOURCE_BYTES } from '#core/limits/sources.ts';
import {
  DAY_SECONDS,
  formatByteCount,
  formatBytes,
  formatCount,
  formatDuration,
  formatMegapixels,
  SIZE_UNITS,
} from '#core/units.ts';
import { BATCH_HEADER } from '#core/use-cases/notify-batch.ts';
import { WEBHOOK_EVENTS, HEADERS as WEBHOOK_HEADERS, WEBHOOK_TIMEOUT_MS } from '#core/webhooks/delivery.ts';
import { describeRetrySchedule } from '#core/webhooks/retry-schedule.ts';
import { SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECONDS } from '#core/webhooks/signature.ts';
import type { AuthMode } from '../http-stack.ts';
import { type Example, exampleName } from './examples.ts';
import { componentRef, describedSchema, type Json } from './json-schema.ts';

export const OPENAPI_VERSION = '3.1.0';
/** Spec section 9: the interface description is version 1.1.0. */
export const API_VERSION = '1.1.0';

// ---------------------------------------------------------------- limits (docs/security.md)

/** Every limit on what a client sends, with the status that refuses it; the message names the limit. */
export const LIMITS = {
  'inline body': { value: MAX_INLINE_BODY_BYTES, unit: 'bytes', status: 413 },
  'URL length': { value: MAX_URL_BYTES, unit: 'bytes', status: 413 },
  'header size': { value: MAX_HEADER_BYTES, unit: 'bytes', status: 413 },
  'JSON body': { value: MAX_JSON_BODY_BYTES, unit: 'bytes', status: 413 },
  'JSON depth': { value: MAX_JSON_DEPTH, unit: 'levels', status: 400 },
  'form fields': { value: MAX_FORM_FIELDS, unit: 'fields', status: 413 },
  'form files': { value: MAX_FORM_FILES, unit: 'files', status: 413 },
  'form parts': { value: MAX_FORM_PARTS, unit: 'parts', status: 413 },
  'field size': { value: MAX_FIELD_BYTES, unit: 'bytes', status: 413 },
  'field name size': { value: MAX_FIELD_NAME_BYTES, unit: 'bytes', status: 413 },
  'id length': { value: MAX_ID_CHARS, unit: 'characters', status: 404 },
  pixels: { value: MAX_IMAGE_PIXELS, unit: 'pixels', status: 413 },
  'px a side': { value: MAX_IMAGE_SIDE, unit: 'pixels', status: 413 },
  'minimum side': { value: MIN_IMAGE_SIDE, unit: 'pixels', status: 400 },
  'aspect ratio': { value: MAX_IMAGE_ASPECT, unit: 'long side / short side', status: 400 },
  frames: { value: MAX_IMAGE_FRAMES, unit: 'frames', status: 415 },
  'requests per second (API key)': {
    value: DEFAULT_KEY_RATE.perSecond,
    burst: DEFAULT_KEY_RATE.burst,
    status: 429,
  },
  'requests per second (address without a key)': {
    value: DEFAULT_GUEST_RATE.perSecond,
    burst: DEFAULT_GUEST_RATE.burst,
    status: 429,
  },
} as const;

// ---------------------------------------------------------------- errors (spec section 7)

export const ERRORS = {
  400: {
    name: 'BadRequest',
    description:
      'Invalid request: a field fails validation (empty form fields count as not sent), the source is ' +
      'missing or sent twice (`file`, `url`, `asset_id`), the `Idempotency-Key` is empty or longer than ' +
      `${MAX_IDEMPOTENCY_KEY_LENGTH} characters, or the image could not be downloaded from \`url\`. Also a field or file sent twice, a ` +
      `form part without a name, JSON nested deeper than ${MAX_JSON_DEPTH} levels, and an image under ${MIN_IMAGE_SIDE} px a side or more ` +
      `than ${MAX_IMAGE_ASPECT} times longer than wide (read from its header before anything is charged). The message names ` +
      'the field or the limit.',
    example: {
      summary: 'Two sources',
      value: { code: 400, message: 'Send exactly one of file, url, asset_id or upload_id', result: false },
    },
  },
  401: {
    name: 'Unauthorized',
    description:
      'The API key is unknown or disabled (both answer the same, so keys cannot be probed), a key was sent ' +
      'where this server does not accept it (query string, form field), or the route needs an account key ' +
      'and none was sent. Authentication fails closed: an empty key, an `Authorization` header that is not ' +
      '`Bearer <key>`, or two different keys in one request are 401, never a guest request.',
    example: {
      summary: 'A wrong key',
      value: { code: 401, message: 'The API key is not valid or has been disabled', result: false },
    },
  },
  402: {
    name: 'PaymentRequired',
    description:
      `Not enough credits to start the operation (${PRICES.edit} per edit, ${PRICES.analysis} per analysis). Credits are reserved when ` +
      'the job is created and given back if it fails or is cancelled.',
    example: {
      summary: 'Not enough credits',
      value: {
        code: 402,
        message: `This operation needs ${PRICES.edit} credits; 3 are available`,
        result: false,
      },
    },
  },
  404: {
    name: 'NotFound',
    description:
      'No such resource for this caller. Another owner’s job, file, asset, batch or delivery answers 404, ' +
      'never 403, so ids cannot be probed. An id of any length or spelling the service could not have ' +
      `issued (over ${MAX_ID_CHARS} characters, characters outside \`A-Za-z0-9_.-\`, broken percent-encoding) ` +
      'is 404 too, as is a route that does not exist; a route that exists asked with a method it does not ' +
      'take is 405, with `Allow` naming the methods it takes, in the same error body.',
    example: {
      summary: 'Unknown or foreign job',
      value: { code: 404, message: 'Job job_7kq2m9x4c8v1b6n3p5r0t2wz does not exist', result: false },
    },
  },
  409: {
    name: 'Conflict',
    description:
      'The request conflicts with the state of the resource: an `Idempotency-Key` reused with a different ' +
      'body, or a move the job’s status does not allow (cancelling a finished job, retrying one that has not ' +
      'failed, redelivering the webhook of a job that is not finished or has no webhook URL).',
  },
  410: {
    name: 'Gone',
    description:
      `Expired, and nothing was charged. The asset named by \`asset_id\` (assets are kept ${ASSET_TTL_DAYS} days; for ${ASSET_REMEMBERED_DAYS} more days a reference ` +
      'answers 410, later 404), or the upload named by `upload_id` past its `usable_until`. A retry of a job whose ' +
      `photos are gone (a job's source is kept ${SOURCE_TTL_DAYS} days after \`created_at\`). A result file from the job's ` +
      `\`expires_at\` on (${RESULT_TTL_DAYS} days after \`finished_at\`), or one its owner deleted.`,
    example: {
      summary: 'An expired result',
      value: {
        code: 410,
        message:
          'This result expired at 2026-12-24T09:30:02.871Z and is deleted: results are kept ' +
          `${formatDuration(RESULT_TTL_DAYS * DAY_SECONDS)} after the job finished`,
        result: false,
      },
    },
  },
  413: {
    name: 'PayloadTooLarge',
    description:
      'Too large; the message names the limit. A request body may be at most ' +
      `${formatByteCount(MAX_INLINE_BODY_BYTES)} (limit: inline body): Lambda takes an event of at most ` +
      `${formatBytes(LAMBDA_INVOKE_PAYLOAD_BYTES)}, in which API Gateway carries a binary body base64-encoded, so ` +
      `(${formatBytes(LAMBDA_INVOKE_PAYLOAD_BYTES)} − ${formatBytes(EVENT_OVERHEAD_BYTES)} for the rest of the event) ` +
      '× 3/4. A body whose event does not fit, and any body over ' +
      `${formatBytes(API_GATEWAY_PAYLOAD_BYTES)}, never reaches the service: API Gateway answers it itself, 413 ` +
      'in its own shape, `{"message":"Request Entity Too Large"}`, not the error body. ' +
      `Larger photos go through POST /uploads (up to ${formatBytes(MAX_PHOTO_BYTES)}) or \`url\` (up to ` +
      `${formatBytes(MAX_SOURCE_BYTES)}), archives through POST /uploads (up to ${formatBytes(MAX_ARCHIVE_BYTES)}). ` +
      `Also 413: an image over ${formatMegapixels(MAX_IMAGE_PIXELS)}, an image at \`url\` over ` +
      `${formatBytes(MAX_SOURCE_BYTES)}, a declared upload over its limit, an archive past a limit. The other ` +
      `limits (all listed under \`x-limits\`): URL ${formatByteCount(MAX_URL_BYTES)}, request line and headers ` +
      `${formatByteCount(MAX_HEADER_BYTES)}, JSON body ${formatByteCount(MAX_JSON_BODY_BYTES)}, ${MAX_FORM_FIELDS} ` +
      `form fields, ${MAX_FORM_FILES} files, ${formatByteCount(MAX_FIELD_BYTES)} a field, and images over ` +
      `${formatCount(MAX_IMAGE_SIDE)} px a side, read from the image header before the job is stored or charged.`,
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'Unsupported format. An image’s format is decided from its magic bytes (JPEG, PNG, WEBP), never from ' +
      'its name or Content-Type header; a body that is neither JSON nor a form is also 415, and so is an ' +
      `animated PNG or WEBP (limit: ${MAX_IMAGE_FRAMES} frame).`,
  },
  422: {
    name: 'UnprocessableContent',
    description:
      'The photo could not be processed; `code` says why: 800 the model could not classify the photo, ' +
      '802 the background mask could not be created, 803 no licence plate was detected. A job that fails ' +
      'this way carries the same code in `error.code`.',
    example: {
      summary: 'No plate',
      value: { code: 803, message: 'No license plate was detected in the photo', result: false },
    },
  },
  429: {
    name: 'TooManyRequests',
    description:
      `Too many requests, with \`Retry-After\` (seconds): more than the request rate of one API key (${DEFAULT_KEY_RATE.perSecond} a ` +
      `second, bursts of ${DEFAULT_KEY_RATE.burst}) or of one address without a key (${DEFAULT_GUEST_RATE.perSecond} a second, bursts of ${DEFAULT_GUEST_RATE.burst}); ` +
      'too many jobs of one account queued or processing at once (20); or too many new guest ' +
      'sessions from one address in a day. The message names the limit. Above these, the whole API has a ' +
      'limit its deployer sets (API Gateway’s stage throttle), answered by API Gateway itself as ' +
      '`{"message":"Too Many Requests"}` without `Retry-After`: retry with backoff.',
  },
  500: {
    name: 'InternalError',
    description:
      'Internal error. Internal details never reach the client; a missing model file is named in the message. ' +
      'Two answers come from API Gateway itself, in its own shape rather than the error body: a function ' +
      'that failed outright is 500 `{"message":"Internal Server Error"}`, and a request not answered within ' +
      `the integration timeout (${formatDuration(INTEGRATION_TIMEOUT_SECONDS)}) is 503 \`{"message":"Service Unavailable"}\`.`,
  },
} as const satisfies Record<number, { name: string; description: string; example?: Example }>;

export type ErrorStatus = keyof typeof ERRORS;

/** An error answer's example, with the message the service sends, under the name its summary gives. */
const examples = (error: { name: string; example?: Example }) =>
  error.example ? { examples: { [exampleName(error.example.summary)]: error.example } } : {};
export const ALL_ERRORS = Object.keys(ERRORS).map(Number) as ErrorStatus[];

// ---------------------------------------------------------------- tags

export const TAGS = [
  { name: 'Jobs', description: 'Processing and analysis jobs: create, poll, list, cancel, retry.' },
  { name: 'Results', description: 'Result files of finished jobs.' },
  { name: 'Assets', description: 'Reusable source images.' },
  { name: 'Files', description: 'The caller’s stored files.' },
  { name: 'Batches', description: 'ZIP archives processed as one batch.' },
  { name: 'Uploads', description: 'Direct uploads to storage, for files over the request size limit.' },
  { name: 'Legacy', description: 'Routes kept compatible for older clients.' },
  { name: 'Account', description: 'Credit balance and the key’s default webhook.' },
  {
    name: 'Webhooks',
    description:
      'The delivery log of a job’s webhook, and redelivery. See docs/webhooks.md for verification.',
  },
  { name: 'Meta', description: 'This document.' },
] as const;

export type TagName = (typeof TAGS)[number]['name'];

// ---------------------------------------------------------------- security (spec section 5)

export const SECURITY_SCHEMES = {
  ApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'An API key, created in the account area; it may store defaults (background, plate colour, ' +
      'smoothing, `plate_mask_only`, webhook). The master key, configured on the server, passes without ' +
      'deducting credits and is for backend use only. A key in the query string or in the legacy form ' +
      'field `api_key` is refused unless the operator enables it.',
  },
  Bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The same API key as `Authorization: Bearer <API_KEY>`.',
  },
  GuestSession: {
    type: 'apiKey',
    in: 'cookie',
    name: GUEST_COOKIE,
    description:
      'Without a key, a request runs against the guest trial balance of its session. The first keyless ' +
      'request opens a session with trial credits and sets this signed cookie ' +
      `(${formatDuration(GUEST_SESSION_SECONDS)}); send it back to ` +
      'stay on that session. /assets, /batches, /files and /webhook need an account key.',
  },
} as const;

export const SECURITY: Record<AuthMode, Json[]> = {
  'key-or-guest': [{ ApiKeyHeader: [] }, { Bearer: [] }, { GuestSession: [] }],
  key: [{ ApiKeyHeader: [] }, { Bearer: [] }],
  none: [],
};

// ---------------------------------------------------------------- the document around the paths

/** What comes before the paths: info, servers, limits and tags. */
export const DOCUMENT_HEAD = {
  info: {
    title: 'Photo Processing Jobs API',
    version: API_VERSION,
    summary: 'Asynchronous processing of car photos: plate hiding, background replacement, masks, analysis.',
    description:
      'Every operation is a job: creation returns its id at once, and the final state is read by polling ' +
      `\`GET /jobs/{job_id}\` or delivered to a webhook. Work is paid in credits: ${PRICES.edit} for a successful edit, ` +
      `${PRICES.analysis} for an analysis.` +
      ' Requests without a key run against a guest trial balance. Bodies are JSON ' +
      'unless stated; uploads are `multipart/form-data`. Result paths in responses are relative to the ' +
      `service address. ${SIZE_UNITS}`,
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  },
  servers: [{ url: API_PREFIX, description: 'Relative to the service address.' }],
  'x-limits': LIMITS,
  tags: [...TAGS],
};

export const WEBHOOKS: Json = {
  jobFinished: {
    post: {
      operationId: 'jobFinished',
      summary: 'A job finished',
      description:
        'Sent to the job’s `webhook_url`, or else the key’s default webhook, when the job finishes, with the ' +
        'final job: the same JSON as polling. A 2xx answer within ' +
        `${formatDuration(WEBHOOK_TIMEOUT_MS / 1000)} delivers it; anything else (another ` +
        `status, a redirect, a timeout) is retried ${describeRetrySchedule()} with exponential backoff ` +
        `and jitter. Verify \`${SIGNATURE_HEADER}\` before trusting the body: see docs/webhooks.md.`,
      parameters: [
        header(WEBHOOK_HEADERS.job, 'The job id.'),
        header(WEBHOOK_HEADERS.event, 'The event: `job.succeeded`, `job.failed` or `job.cancelled`.', [
          ...WEBHOOK_EVENTS,
        ]),
        header(
          WEBHOOK_HEADERS.delivery,
          'Id of this delivery; the same on each retry of it, so duplicates can be dropped.',
        ),
        header(WEBHOOK_HEADERS.attempt, 'Attempt number within the delivery, from 1.'),
        {
          ...header(
            SIGNATURE_HEADER,
            '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the key’s webhook secret>`; a ' +
              `second \`v1\` while a rotated secret overlaps. Refuse a \`t\` older than ${formatDuration(SIGNATURE_TOLERANCE_SECONDS)}. Absent for ` +
              'jobs of the master key and of guest sessions, which have no secret.',
          ),
          required: false,
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: componentRef('JobEnvelope') } },
      },
      responses: {
        '2XX': { description: 'Delivered.' },
        default: { description: 'Not delivered; retried on the schedule.' },
      },
    },
  },
  batchFinished: {
    post: {
      operationId: 'batchFinished',
      summary: 'A batch finished',
      description:
        'Sent to the key’s default webhook (as it was when the batch was created) when the batch completes, ' +
        'or when a cancelled batch’s last running photo has ended, with what GET /batches/{batch_id} ' +
        'answers then. Signed like the job webhook. One attempt only for now: no retry schedule and no ' +
        'delivery log yet (docs/decisions/0035-batch-download-and-webhook.md). Item jobs send no webhook of their own.',
      parameters: [
        header(BATCH_HEADER, 'The batch id.'),
        header(WEBHOOK_HEADERS.event, 'The event.', ['batch.completed', 'batch.cancelled']),
        header(WEBHOOK_HEADERS.delivery, 'Id of this delivery; the same for the same final state.'),
        header(WEBHOOK_HEADERS.attempt, 'Always 1.'),
        { ...header(SIGNATURE_HEADER, 'As for the job webhook.'), required: false },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: componentRef('BatchEnvelope') } },
      },
      responses: { '2XX': { description: 'Delivered.' }, default: { description: 'Not delivered.' } },
    },
  },
};

const idempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .describe(
    'Send the same key with an identical body on a network retry, and no second job or reservation is made: ' +
      'a finished job is returned with 200, one still running with 202, and a different body under the same ' +
      'key is 409. Keys are scoped to the calling key and remembered ' +
      `${formatDuration(IDEMPOTENCY_TTL_SECONDS)}. "Identical" means the same ` +
      'route, mode, parameters and source (uploads are compared by content hash).',
  );

/** Statuses API Gateway also answers itself, in its own shape (`ApiGatewayError`), with no function involved. */
const ANSWERED_BY_API_GATEWAY: ReadonlySet<number> = new Set([413, 500]);

/** The components besides the schemas: the error answers, the shared header parameter, security. */
export const COMMON_COMPONENTS = {
  responses: Object.fromEntries(
    ALL_ERRORS.map((status) => [
      ERRORS[status].name,
      {
        description: ERRORS[status].description,
        ...(status === 429
          ? {
              headers: {
                'Retry-After': {
                  description: 'Seconds to wait before trying again.',
                  schema: { type: 'integer', minimum: 1 },
                },
              },
            }
          : {}),
        content: {
          'application/json': {
            schema: ANSWERED_BY_API_GATEWAY.has(status)
              ? { anyOf: [componentRef('ErrorBody'), componentRef('ApiGatewayError')] }
              : componentRef('ErrorBody'),
            ...examples(ERRORS[status]),
          },
        },
      },
    ]),
  ),
  parameters: {
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      ...describedSchema(idempotencyKey),
    },
  },
  securitySchemes: SECURITY_SCHEMES,
};

function header(name: string, description: string, values?: string[]): Json {
  return {
    name,
    in: 'header',
    required: true,
    description,
    schema: values ? { type: 'string', enum: values } : { type: 'string' },
  };
}
