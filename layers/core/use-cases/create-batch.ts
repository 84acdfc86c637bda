import { createHash } from 'node:crypto';
import {
  DEFAULT_ZIP_LIMITS,
  listZip,
  readZipEntry,
  type ZipEntry,
  ZipEntryError,
  type ZipLimits,
  zipBudget,
} from '../archive/zip-reader.ts';
import { type Batch, type BatchItem, newBatchId } from '../batches/batch.ts';
import { costOf } from '../credits/credits.ts';
import { BadRequestError, InsufficientCreditsError } from '../errors.ts';
import { storageName } from '../files/assets.ts';
import { imageProblem } from '../image-limits.ts';
import { type ImageType, sniffImageType } from '../images.ts';
import type { UploadedFile } from '../jobs/input.ts';
import type { JobError, Operation } from '../jobs/job.ts';
import { type RequestedParams, resolveParams } from '../jobs/params.ts';
import { accountOf, type Caller, defaultsOf, ownerIdOf } from '../keys/caller.ts';
import type { AccountRepository, ObjectStore } from '../ports.ts';
import { advanceBatch, type BatchDeps } from './advance-batch.ts';

export interface CreateBatchDeps extends BatchDeps {
  objects: ObjectStore;
  accounts: AccountRepository;
  maxSourceBytes: number;
  batchConcurrency: number;
  zipLimits?: ZipLimits;
}

export interface BatchRequest {
  archive: UploadedFile;
  operation: Exclude<Operation, 'analyze'>;
  requested: Pick<RequestedParams, 'plateColor' | 'background'>;
}

/** Photos are copied to storage this many at a time: fast enough for 1000 entries inside an API call. */
const STORE_PARALLELISM = 8;
const NESTED_ARCHIVE = /\.(zip|zipx|jar|rar|7z|tar|tgz|gz|bz2|xz|zst)$/i;

interface Classified {
  entry: ZipEntry;
  type: ImageType | null;
  sha256: string | null;
  skipped: JobError | null;
}

/**
 * Create a batch from a ZIP archive (POST /batches).
 * 1. 402 at once when the account cannot pay for one item: nothing is unpacked or stored.
 * 2. Read the archive's directory under the limits (415 not a ZIP; 400 traversal, absolute paths, links;
 *    413 naming the limit), then inflate every entry once to classify it: a photo (by its bytes), or a
 *    skipped entry with the reason (not an image, nested archive, unreadable, too large).
 * 3. With every limit passed, store each photo under `batches/<id>/items/<index>/` and the batch with its
 *    items; nothing is stored for an archive that is refused.
 * 4. Advance the batch: its first items start now, each with its own reservation.
 */
export async function createBatch(deps: CreateBatchDeps, caller: Caller, request: BatchRequest) {
  const account = accountOf(caller);
  const cost = costOf(request.operation);
  if (account) {
    const balance = await deps.accounts.get(account);
    if ((balance?.available ?? 0) < cost) {
      throw new InsufficientCreditsError(
        `A batch needs ${cost} credits for each photo when it starts; ${balance?.available ?? 0} are available`,
      );
    }
  }

  const limits = deps.zipLimits ?? DEFAULT_ZIP_LIMITS;
  const archive = request.archive.bytes;
  const listing = listZip(archive, limits);
  const classified = classify(archive, listing.files, limits, deps.maxSourceBytes);
  const photos = classified.filter((entry) => entry.type);
  if (photos.length === 0) {
    throw new BadRequestError(
      `archive holds no JPG, PNG or WEBP photo (${classified.length} file(s) looked at, ${listing.ignored} ignored)`,
    );
  }

  const now = deps.clock.now().toISOString();
  const batchId = newBatchId();
  const items: BatchItem[] = classified.map((entry, index) => ({
    batchId,
    index,
    name: entry.entry.name,
    source:
      entry.type && entry.sha256
        ? {
            key: `batches/${batchId}/items/${index}/${storageName(entry.entry.name.split('/').pop()!, entry.type)}`,
            contentType: entry.type,
            bytes: entry.entry.size,
            sha256: entry.sha256,
            originalName: entry.entry.name,
          }
        : null,
    skipped: entry.skipped,
    attempts: 0,
    outcome: null,
  }));
  await storePhotos(deps, archive, classified, items, limits);

  const defaults = defaultsOf(caller);
  const batch: Batch = {
    id: batchId,
    ownerId: ownerIdOf(caller),
    account,
    operation: request.operation,
    // Item jobs send no webhook each: the batch sends one when it finishes.
    params: { ...resolveParams(request.requested, defaults), webhookUrl: null },
    webhookUrl: defaults.webhookUrl ?? null,
    status: 'processing',
    pauseReason: null,
    concurrency: deps.batchConcurrency,
    archive: { name: request.archive.filename, bytes: archive.length },
    total: items.length,
    skipped: items.length - photos.length,
    queue: items.filter((item) => item.source).map((item) => item.index),
    running: [],
    neverRan: [],
    succeeded: 0,
    failed: 0,
    cancelled: 0,
    chargedCredits: 0,
    revision: 0,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
    updatedAt: now,
    version: 1,
  };
  await deps.batches.create(batch, items);
  // The batch exists from here on: a failure to start its first items now is healed by the next read
  // (a processing batch with items waiting and none running is advanced when it is read).
  const advanced = await advanceBatch(deps, batchId).catch(() => batch);
  return { batch: advanced, items: await deps.batches.items(batchId) };
}

function classify(
  archive: Buffer,
  files: ZipEntry[],
  limits: ZipLimits,
  maxSourceBytes: number,
): Classified[] {
  const budget = zipBudget(limits);
  return files.map((entry) => {
    const skip = (code: number, message: string): Classified => ({
      entry,
      type: null,
      sha256: null,
      skipped: { code, message },
    });
    if (NESTED_ARCHIVE.test(entry.name)) return skip(415, 'Nested archives are not opened');
    let bytes: Buffer;
    try {
      bytes = readZipEntry(archive, entry, budget, limits);
    } catch (error) {
      if (error instanceof ZipEntryError) return skip(400, `Could not read the entry: ${error.message}`);
      throw error;
    }
    const type = sniffImageType(bytes);
    if (!type) {
      if (bytes.subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'))) {
        return skip(415, 'Nested archives are not opened');
      }
      return skip(415, 'Not a JPG, PNG or WEBP image');
    }
    if (bytes.length > maxSourceBytes) return skip(413, `The photo is larger than ${maxSourceBytes} bytes`);
    const problem = imageProblem(bytes, 'The photo');
    if (problem) return skip(problem.code, problem.message);
    return { entry, type, sha256: createHash('sha256').update(bytes).digest('hex'), skipped: null };
  });
}

/** Inflate each photo again (they all passed the limits once) and store it, a few at a time. */
async function storePhotos(
  deps: { objects: ObjectStore },
  archive: Buffer,
  classified: Classified[],
  items: BatchItem[],
  limits: ZipLimits,
): Promise<void> {
  const budget = zipBudget(limits);
  const pending = items.filter((item) => item.source);
  const worker = async () => {
    for (let item = pending.shift(); item; item = pending.shift()) {
      const bytes = readZipEntry(archive, classified[item.index]!.entry, budget, limits);
      await deps.objects.put(item.source!.key, bytes, item.source!.contentType);
    }
  };
  await Promise.all(Array.from({ length: STORE_PARALLELISM }, worker));
}
