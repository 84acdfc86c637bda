import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';
import { BadRequestError } from '../errors.ts';
import {
  checkImageOptions,
  imageOptionsSchema,
  requestedImageOptions,
  type UploadedFile,
} from '../jobs/input.ts';
import { BATCH_OPERATION_NAMES } from '../jobs/operations.ts';
import { parseBooleanish } from '../jobs/params.ts';
import type { BatchRequest } from '../use-cases/create-batch.ts';

/**
 * The text fields of POST /batches; the archive arrives as the upload `archive`, a custom background as
 * `background_file`. Every option of a single job (`imageOptionsSchema`) applies to each photo.
 */
export const batchInputSchema = builtOnFirstUse(() =>
  z.object({
    upload_id: z.string().min(1).max(100).optional(),
    mode: z
      .enum(BATCH_OPERATION_NAMES, {
        error: (issue) =>
          issue.input === 'analyze'
            ? `analyze is not accepted for batches (a ZIP): choose ${BATCH_OPERATION_NAMES.join(', ')}, or send the photos one by one`
            : undefined,
      })
      .default('plate'),
    ...imageOptionsSchema().shape,
  }),
);

/** The query of GET /batches/{batch_id}/download; an empty `partial` counts as not sent. */
export const downloadBatchQuery = builtOnFirstUse(() =>
  z.object({
    partial: z
      .string()
      .optional()
      .transform((raw) => (raw === undefined || raw === '' ? false : parseBooleanish('partial', raw))),
  }),
);

export function parseBatchRequest(
  fields: Record<string, unknown>,
  files: Record<string, UploadedFile>,
): BatchRequest {
  const sent = Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== '' && value !== null),
  );
  const parsed = batchInputSchema().safeParse(sent);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BadRequestError(`${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  const archive = files.archive;
  const uploadId = parsed.data.upload_id ?? null;
  if (archive && uploadId) throw new BadRequestError('Send exactly one of archive or upload_id');
  if (!archive && !uploadId) {
    throw new BadRequestError(
      'Send the ZIP archive as the multipart file field archive, or upload it first and send upload_id',
    );
  }
  const requested = requestedImageOptions(parsed.data);
  checkImageOptions(requested);
  return {
    archive: archive ? { kind: 'file', file: archive } : { kind: 'upload', uploadId: uploadId! },
    operation: parsed.data.mode,
    requested,
    backgroundFile: files.background_file ?? null,
  };
}
