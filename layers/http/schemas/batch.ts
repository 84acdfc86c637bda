/** The batch resource (spec 2.7), as its routes answer it. */
import * as z from 'zod';
import { BATCH_STATUSES, ITEM_STATUSES, PAUSE_REASONS } from '#core/batches/batch.ts';
import { BACKGROUNDS } from '#core/jobs/job.ts';
import { BATCH_OPERATION_NAMES, credits, PRICES } from '#core/jobs/operations.ts';
import { MAX_PHOTO_BYTES } from '#core/limits/sources.ts';
import { formatBytes } from '#core/units.ts';
import { timestamp } from './fields.ts';
import { JobError } from './job.ts';

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

export const BatchItem = z
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
        `400 unreadable entry; 413 larger than ${formatBytes(MAX_PHOTO_BYTES)}.`,
    ),
    result: z
      .string()
      .nullable()
      .describe('Path of the result image once it succeeded; served like a job’s `url`.'),
  })
  .describe('One file of the archive.');

export const Batch = z
  .object({
    id: z.string().describe('Batch id, `bat_` and 24 random characters.'),
    status: z
      .enum(BATCH_STATUSES)
      .describe(
        '`unpacking` while a workflow step reads the archive and stores its photos (items appear when it ' +
          'ends); `processing` starts photos while fewer than `concurrency` run; `paused` starts none and ' +
          'lets the running ones finish; `completed` once nothing waits or runs; `cancelled` by its owner; ' +
          '`failed` when the archive could not be unpacked (see `error`). See docs/decisions/0033-batch-states-and-moves.md.',
      ),
    pause_reason: z
      .enum(PAUSE_REASONS)
      .nullable()
      .describe(
        'Why it is paused: `requested` by its owner, `insufficient_credits` (a photo could not reserve its ' +
          `${credits(PRICES.edit)}; top up and resume), \`too_many_jobs\` (the account’s other jobs hold every slot).`,
      ),
    mode: z.enum(BATCH_OPERATION_NAMES),
    background: z.enum([...BACKGROUNDS, 'custom']).nullable(),
    plate_color: z.string(),
    concurrency: z.int().describe('Photos that run at once.'),
    counts: BatchCounts,
    cost_credits: z
      .number()
      .describe(`Credits charged so far: ${PRICES.edit} per succeeded photo (0 for the master key).`),
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
export const BatchEnvelope = z
  .object({ batch: Batch })
  .describe('A batch, as GET and the control actions answer it.');
