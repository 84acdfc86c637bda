/** The schema components of create-upload's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { formatDuration } from '#core/units.ts';
import { UPLOAD_CONTENT_TYPES, UPLOAD_URL_SECONDS } from '#core/uploads/upload.ts';
import { uploadRequestSchema } from '#core/use-cases/create-upload.ts';
import { endpointDocument } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/describe.ts';
import { timestamp } from '#http/schemas/fields.ts';
import { archiveBytes, photoBytes, usable } from './schema.ts';

const UploadRequest = documentedFields(
  uploadRequestSchema(),
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

export const document = endpointDocument({
  requestSchemas: { UploadRequest },
  responseSchemas: { UploadCreated },
});
