/** The contract of POST /uploads: its body (the run-time `UploadRequestSchema`, described) and its answer. */
import * as z from 'zod';
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES } from '#core/limits/sources.ts';
import { formatBytes, formatDuration, formatMegapixels, HOUR_SECONDS } from '#core/units.ts';
import { UPLOAD_CONTENT_TYPES, UPLOAD_TTL_HOURS, UPLOAD_URL_SECONDS } from '#core/uploads/upload.ts';
import { UploadRequestSchema } from '#core/use-cases/create-upload.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';
import { documentedFields, timestamp } from '#http/schemas/fields.ts';

const photoBytes = formatBytes(MAX_PHOTO_BYTES);
const archiveBytes = formatBytes(MAX_ARCHIVE_BYTES);
const usable = formatDuration(UPLOAD_TTL_HOURS * HOUR_SECONDS);

const UploadRequest = documentedFields(
  UploadRequestSchema,
  {
    content_type: {
      // Any other type is refused with 415 by the use case, after the schema.
      enum: Object.keys(UPLOAD_CONTENT_TYPES),
      description: 'Type of the file; the PUT must send exactly this `Content-Type` (it is signed).',
    },
    filename: { description: 'The file’s name, kept as the source’s original name.' },
    size: {
      description:
        'Exact size in bytes; the PUT must send exactly this many (Content-Length is signed). At most ' +
        `${photoBytes} for a photo, ${archiveBytes} for an archive (413 over).`,
    },
  },
  { description: 'A direct upload to open (POST /uploads), as JSON or as a form.' },
);

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
    expires_at: timestamp.describe(`The URL works until then (${formatDuration(UPLOAD_URL_SECONDS)}).`),
    usable_until: timestamp.describe(
      `The upload can be named as \`upload_id\` until then (${usable}), by any number of requests; then 410.`,
    ),
  })
  .describe('A direct upload: where to PUT the file, and the id to name it by afterwards.');

export const contract = endpointContract({
  auth: 'key',
  requestSchemas: { UploadRequest },
  responseSchemas: { UploadCreated },
  operations: {
    'POST /uploads': {
      operationId: 'createUpload',
      summary: `Open a direct upload (photos over the request limit, archives up to ${archiveBytes})`,
      description:
        'Needs an account key. Answers a presigned storage URL: PUT the file there yourself (plain HTTP, ' +
        'no key), with the `content-type` header given and exactly `size` bytes; storage refuses any other ' +
        'type or length (403). Then name the file as `upload_id` in POST /jobs, /process, /analyze, /assets ' +
        '(photos) or /batches (ZIP archives), JSON or form. An upload may be used by any number of requests ' +
        `of its owner for ${usable} (then 410); another owner’s is 404; one not yet PUT is 409; one whose ` +
        'stored size differs from `size` is 400; bytes that are not an image (or not a ZIP for batches) are ' +
        '415. Nothing is charged for an upload or for a refused use of it. Limits: photos ' +
        `${photoBytes} and ${formatMegapixels(MAX_IMAGE_PIXELS)}, archives ${archiveBytes} (413 over).`,
      tag: 'Uploads',
      body: { 'application/json': 'UploadRequest', 'application/x-www-form-urlencoded': 'UploadRequest' },
      responses: { 201: json('UploadCreated', 'Upload opened: PUT the file to `url`.') },
    },
  },
});
