/**
 * The error answers of the API (spec section 7), one per status: when each is given, in words whose numbers
 * come from the limits the code runs on, and an example of the body with the message the service sends.
 */

import { ASSET_REMEMBERED_DAYS, ASSET_TTL_DAYS } from '#core/files/asset-rules.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '#core/idempotency/idempotency.ts';
import { RESULT_TTL_DAYS, SOURCE_TTL_DAYS } from '#core/jobs/expiry.ts';
import { PRICES } from '#core/jobs/operations.ts';
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
  MAX_FORM_FIELDS,
  MAX_FORM_FILES,
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
} from '#core/units.ts';
import { type Example, exampleName } from './examples.ts';

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
export const examples = (error: { name: string; example?: Example }) =>
  error.example ? { examples: { [exampleName(error.example.summary)]: error.example } } : {};
export const ALL_ERRORS = Object.keys(ERRORS).map(Number) as ErrorStatus[];
