/** The contract of POST /uploads: its body (the run-time `uploadRequestSchema`, described) and its answer. */
import { MAX_IMAGE_PIXELS } from '#core/limits/image.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES } from '#core/limits/sources.ts';
import { formatBytes, formatDuration, formatMegapixels, HOUR_SECONDS } from '#core/units.ts';
import { UPLOAD_TTL_HOURS } from '#core/uploads/upload.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';

export const photoBytes = formatBytes(MAX_PHOTO_BYTES);
export const archiveBytes = formatBytes(MAX_ARCHIVE_BYTES);
export const usable = formatDuration(UPLOAD_TTL_HOURS * HOUR_SECONDS);

export const contract = endpointContract({
  auth: 'key',
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
