/**
 * What the OpenAPI document says beyond the endpoints' contracts: the API's description, its limits,
 * security (spec section 5) and shared components; the errors (spec section 7) are in ./errors.ts and the
 * webhooks in ./webhooks.ts. Numbers, header names and the retry schedule come from the constants the code
 * runs on; ./generator.ts puts it together with the endpoints.
 */

import * as z from 'zod';
import { IDEMPOTENCY_TTL_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from '#core/idempotency/idempotency.ts';
import { API_PREFIX } from '#core/jobs/envelope.ts';
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
import { formatDuration, SIZE_UNITS } from '#core/units.ts';
import type { AuthMode } from '../http-stack.ts';
import { ALL_ERRORS, ERRORS, examples } from './errors.ts';
import { componentRef, describedSchema, type Json } from './json-schema.ts';

export const OPENAPI_VERSION = '3.1.0';
/** Spec section 9: the interface description is version 1.1.0. */
const API_VERSION = '1.1.0';

// ---------------------------------------------------------------- limits (docs/security.md)

/** Every limit on what a client sends, with the status that refuses it; the message names the limit. */
const LIMITS = {
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

// ---------------------------------------------------------------- tags

const TAGS = [
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

const SECURITY_SCHEMES = {
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

const idempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .describe(
    'Send the same key with an identical body on a network retry, and no second job or reservation is made: ' +
      'a finished job is returned with 200, one still running with 202, and a different body under the same ' +
      'key is 409. A job that failed before it ever ran (the 503 "could not be started", nothing charged) is ' +
      'started again, as `POST /jobs/{id}/retry` would, and answered with 202. Keys are scoped to the calling key and remembered ' +
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
