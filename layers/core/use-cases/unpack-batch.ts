import { createHash } from 'node:crypto';
import type { Batch, BatchItem } from '../batches/batch.ts';
import { PayloadTooLargeError, ZipEntryError } from '../errors.ts';
import { storageName } from '../files/asset-rules.ts';
import { type ImageType, sniffImageType } from '../images.ts';
import type { JobError } from '../jobs/job.ts';
import {
  DEFAULT_ZIP_LIMITS,
  type ZipBudget,
  type ZipEntry,
  type ZipLimits,
  zipBudget,
} from '../limits/archive.ts';
import { imageProblem } from '../limits/image.ts';
import type { ArchiveReader, ObjectStore, OpenedArchive } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import { advanceBatch, type BatchDeps } from './advance-batch.ts';

export interface UnpackDeps extends BatchDeps {
  objects: ObjectStore;
  archives: ArchiveReader;
  maxSourceBytes: number;
  zipLimits?: ZipLimits;
}

/** Photos stored at once: the step holds at most this many photos (each under `maxSourceBytes`). */
const STORE_PARALLELISM = 8;
const NESTED_ARCHIVE = /\.(zip|zipx|jar|rar|7z|tar|tgz|gz|bz2|xz|zst)$/i;
/** Enough of an entry to tell an image (and a nested ZIP) by its first bytes. */
const SNIFF_BYTES = 16;
const MAX_ATTEMPTS = 10;

type Classified =
  | { type: ImageType; sha256: string; bytes: number; skipped: null }
  | { type: null; sha256: null; bytes: number; skipped: JobError };

/**
 * Unpack a new batch's archive (a step of the archive workflow, never the API function).
 * 1. Only an `unpacking` batch is unpacked; a repeated or late call (cancelled meanwhile) does nothing.
 * 2. Read the archive from storage by ranges, entry by entry, a few at a time. An entry is looked at by
 *    its first bytes: a photo is read to its end (checked against its CRC-32 and size, under the
 *    limits) and stored under `batches/<id>/items/<index>/`; anything else is skipped with the reason
 *    (not an image, nested archive, unreadable, too large) and the rest of it is never read.
 * 3. Store the items, then in one write under the batch's version: `processing` with every photo
 *    waiting, or `completed` at once when none is a photo. Advance the batch: its first items start.
 */
export async function unpackBatch(deps: UnpackDeps, batchId: string): Promise<Batch | null> {
  const batch = await deps.batches.get(batchId);
  if (batch?.status !== 'unpacking' || !batch.archive.key) return batch;
  const limits = deps.zipLimits ?? DEFAULT_ZIP_LIMITS;
  const archive = await deps.archives.open(batch.archive.key, limits);
  const items: BatchItem[] = [];
  try {
    const budget = zipBudget(limits);
    const pending = archive.listing.files.map((entry, index) => ({ entry, index }));
    const worker = async () => {
      for (let next = pending.shift(); next; next = pending.shift()) {
        const { entry, index } = next;
        const key = (type: ImageType) =>
          storageKeys.batchItem(batchId, index, storageName(entry.name.split('/').pop()!, type));
        const found = await classify(deps, archive, entry, budget, key);
        items[index] = {
          batchId,
          index,
          name: entry.name,
          source: found.type
            ? {
                key: key(found.type),
                contentType: found.type,
                bytes: found.bytes,
                sha256: found.sha256,
                originalName: entry.name,
              }
            : null,
          skipped: found.skipped,
          attempts: 0,
          outcome: null,
        };
      }
    };
    await Promise.all(Array.from({ length: STORE_PARALLELISM }, worker));
  } finally {
    await archive.close();
  }
  await deps.batches.putItems(items);

  const photos = items.filter((item) => item.source).map((item) => item.index);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = attempt === 0 ? batch : await deps.batches.get(batchId);
    if (current?.status !== 'unpacking') return current;
    const now = deps.clock.now().toISOString();
    const unpacked: Batch = {
      ...current,
      status: photos.length > 0 ? 'processing' : 'completed',
      total: items.length,
      skipped: items.length - photos.length,
      queue: photos,
      revision: photos.length > 0 ? current.revision : current.revision + 1,
      finishedAt: photos.length > 0 ? null : now,
      updatedAt: now,
    };
    if (!(await deps.batches.update(current, unpacked))) continue;
    if (photos.length === 0) {
      const finished = { ...unpacked, version: current.version + 1 };
      await deps.batchFinished?.(finished);
      return finished;
    }
    return advanceBatch(deps, batchId);
  }
  return deps.batches.get(batchId);
}

/**
 * The batch's archive could not be unpacked (the workflow's last resort, after its retries): the batch
 * fails with the reason, and nothing was reserved for it.
 */
export async function failUnpacking(
  deps: BatchDeps,
  batchId: string,
  error: JobError,
): Promise<Batch | null> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const batch = await deps.batches.get(batchId);
    if (batch?.status !== 'unpacking') return batch;
    const now = deps.clock.now().toISOString();
    const failed: Batch = {
      ...batch,
      status: 'failed',
      error,
      revision: batch.revision + 1,
      finishedAt: now,
      updatedAt: now,
    };
    if (await deps.batches.update(batch, failed)) {
      const finished = { ...failed, version: batch.version + 1 };
      await deps.batchFinished?.(finished);
      return finished;
    }
  }
  return deps.batches.get(batchId);
}

async function classify(
  deps: UnpackDeps,
  archive: OpenedArchive,
  entry: ZipEntry,
  budget: ZipBudget,
  keyOf: (type: ImageType) => string,
): Promise<Classified> {
  const skip = (code: number, message: string): Classified => ({
    type: null,
    sha256: null,
    bytes: entry.size,
    skipped: { code, message },
  });
  if (NESTED_ARCHIVE.test(entry.name)) return skip(415, 'Nested archives are not opened');
  const chunks: Buffer[] = [];
  let read = 0;
  let type: ImageType | null = null;
  try {
    for await (const chunk of archive.entry(entry, budget)) {
      chunks.push(chunk);
      read += chunk.length;
      if (type === null && read >= Math.min(SNIFF_BYTES, entry.size)) {
        const head = Buffer.concat(chunks);
        type = sniffImageType(head);
        if (!type) {
          // Only the first bytes of something that is not a photo are ever read.
          return head.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'))
            ? skip(415, 'Nested archives are not opened')
            : skip(415, 'Not a JPG, PNG or WEBP image');
        }
        if (entry.size > deps.maxSourceBytes)
          return skip(413, `The photo is larger than ${deps.maxSourceBytes} bytes`);
      }
    }
  } catch (error) {
    if (error instanceof ZipEntryError) return skip(400, `Could not read the entry: ${error.message}`);
    if (error instanceof PayloadTooLargeError) return skip(413, error.message);
    throw error;
  }
  const bytes = Buffer.concat(chunks);
  type ??= sniffImageType(bytes);
  if (!type) return skip(415, 'Not a JPG, PNG or WEBP image');
  const problem = imageProblem(bytes, 'The photo');
  if (problem) return skip(problem.code, problem.message);
  await deps.objects.put(keyOf(type), bytes, type);
  return {
    type,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
    skipped: null,
  };
}
