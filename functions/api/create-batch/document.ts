/** The schema components of create-batch's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { batchInputSchema } from '#core/batches/input.ts';
import { DEFAULT_ZIP_LIMITS } from '#core/limits/archive.ts';
import { MAX_INLINE_BODY_BYTES } from '#core/limits/request.ts';
import { MAX_ARCHIVE_BYTES, MAX_PHOTO_BYTES } from '#core/limits/sources.ts';
import { formatBytes, formatCount } from '#core/units.ts';
import { endpointDocument } from '#http/openapi/contract.ts';
import { Batch } from '#http/schemas/batch.ts';
import { documentedFields } from '#http/schemas/describe.ts';

const zip = DEFAULT_ZIP_LIMITS;

documentedFields(batchInputSchema(), {
  upload_id: {
    description: 'Id of a completed direct upload of a ZIP archive (POST /uploads); instead of `archive`.',
  },
  mode: { description: 'Operation applied to every photo; `analyze` is not accepted for batches.' },
});
// The image options are the very fields of the job input (`imageOptionsSchema`), documented with it.

const BatchForm = batchInputSchema()
  .extend({
    background_file: z
      .file()
      .mime(['image/jpeg', 'image/png', 'image/webp'])
      .optional()
      .describe('Custom background for every photo (JPG, PNG or WEBP), as `background_file` of a job.'),
    archive: z
      .file()
      .mime(['application/zip'])
      .optional()
      .describe(
        'ZIP archive of JPG, PNG or WEBP photos, in folders if you like (the download keeps them). At most ' +
          `${formatCount(zip.maxEntries)} files, ${formatBytes(zip.maxEntryBytes)} per file and ` +
          `${formatBytes(zip.maxTotalBytes)} in all once inflated, no entry more than ${zip.maxRatio} times its ` +
          `compressed size (above ${formatBytes(zip.ratioFloorBytes)}); stored or deflated entries, ZIP64 too. ` +
          'Entries named with `..`, an ' +
          'absolute path or a drive letter, and links, refuse the whole archive (400). Directories, ' +
          '`__MACOSX/` and dotfiles are ignored; other files, nested archives, unreadable entries and photos ' +
          `over ${formatBytes(MAX_PHOTO_BYTES)} become skipped items. The request itself is limited as every request ` +
          `(413 over ${formatBytes(MAX_INLINE_BODY_BYTES)}): larger archives (up to ` +
          `${formatBytes(MAX_ARCHIVE_BYTES)}) go ` +
          'through POST /uploads and `upload_id`. Send `archive` or `upload_id`.',
      ),
  })
  .describe(
    'A batch upload (POST /batches). Not idempotent: every upload is a new batch. Every option of a job ' +
      '(`background`, `background_file`, plate options, `format`, `max_width`, `framing`, `shadow`) applies ' +
      'to each photo. Item jobs take the key’s stored defaults where a field is not sent, but send no ' +
      'webhook each: the batch sends one when it ends.',
  );

/** The same fields as JSON, where `parseBatchRequest` needs `upload_id` since no file can come along. */
const BatchInput = batchInputSchema().meta({
  required: ['upload_id'],
  description: 'A batch of an archive sent by direct upload (POST /uploads), as JSON.',
});

const BatchCreated = z
  .object({
    batch: Batch,
    status_url: z.string().describe('Path of the batch, `/api/v1/batches/{batch_id}`.'),
  })
  .describe('A new batch: its first photos are already starting.');

export const document = endpointDocument({
  requestSchemas: { BatchForm, BatchInput },
  responseSchemas: { BatchCreated },
});
