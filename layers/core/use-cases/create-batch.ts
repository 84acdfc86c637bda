import { type Batch, newBatchId } from '../batches/batch.ts';
import { BadRequestError, UnsupportedMediaTypeError } from '../errors.ts';
import { extensionOf, type ImageType, sniffImageType } from '../images.ts';
import type { UploadedFile } from '../jobs/input.ts';
import type { Operation } from '../jobs/operations.ts';
import { costOf } from '../jobs/operations.ts';
import { type RequestedParams, resolveParams } from '../jobs/params.ts';
import { accountOf, type Caller, defaultsOf, ownerIdOf } from '../keys/caller.ts';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../limits/archive.ts';
import { imageProblem } from '../limits/image.ts';
import type { AccountRepository, ArchiveReader, ArchiveWorkflow, ObjectStore } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import type { BatchDeps } from './advance-batch.ts';
import { refuseUnlessAffordable } from './affordability.ts';

export interface CreateBatchDeps extends BatchDeps {
  objects: ObjectStore;
  accounts: AccountRepository;
  archives: ArchiveReader;
  archiveWorkflow: ArchiveWorkflow;
  batchConcurrency: number;
  zipLimits?: ZipLimits;
  /** An `upload_id` source: its stored archive, checked for owner, expiry and size. */
  openUpload?(caller: Caller, uploadId: string, kind: 'archive'): Promise<StoredArchive>;
}

/** An archive already in storage (a direct upload), by key. */
interface StoredArchive {
  key: string;
  bytes: number;
  filename: string | null;
}

type ArchiveSpec = { kind: 'file'; file: UploadedFile } | { kind: 'upload'; uploadId: string };

export interface BatchRequest {
  archive: ArchiveSpec;
  operation: Exclude<Operation, 'analyze'>;
  /** Every option of a single job but its webhook (the batch sends one webhook when it ends). */
  requested: Omit<RequestedParams, 'webhookUrl' | 'backgroundFileKey'>;
  /** A custom background for every photo, as `background_file` of a job. */
  backgroundFile?: UploadedFile | null;
}

/** `background_file` of a batch: an accepted image, checked as a job's (415, 400) before anything is stored. */
function checkedBackground(file: UploadedFile): { file: UploadedFile; type: ImageType } {
  const type = sniffImageType(file.bytes);
  if (!type) throw new UnsupportedMediaTypeError('background_file is not a JPG, PNG or WEBP image');
  const problem = imageProblem(file.bytes, 'background_file');
  if (problem) throw problem;
  return { file, type };
}

/** Name of the execution that unpacks a batch: one per batch, so a repeated start is a no-op. */
export const unpackExecution = (batchId: string): string => `unpack-${batchId}`;

/**
 * Create a batch from a ZIP archive (POST /batches). The archive is never held whole: an inline one
 * (a few MB at most) is stored first, an uploaded one is already in storage; only its directory is read.
 * 1. 402 at once when the account cannot pay for one item: nothing is read or stored.
 * 2. Read the archive's directory by ranges under the limits (415 not a ZIP; 400 traversal, absolute
 *    paths, links; 413 naming the limit); 400 when it lists no file at all. A refused inline archive is
 *    deleted again.
 * 3. Store the batch as `unpacking` with its entry count, and start the archive workflow, whose step
 *    classifies and stores each photo (layers/core/use-cases/unpack-batch.ts) and starts the first items.
 *    A start that fails is made up by the sweeper, which restarts unpacking batches that do not move.
 */
export async function createBatch(deps: CreateBatchDeps, caller: Caller, request: BatchRequest) {
  const account = accountOf(caller);
  const cost = costOf(request.operation);
  await refuseUnlessAffordable(
    deps.accounts,
    caller,
    cost,
    `A batch needs ${cost} credits for each photo when it starts`,
  );

  const background = request.backgroundFile ? checkedBackground(request.backgroundFile) : null;
  const batchId = newBatchId();
  const limits = deps.zipLimits ?? DEFAULT_ZIP_LIMITS;
  let stored: StoredArchive;
  if (request.archive.kind === 'file') {
    const { file } = request.archive;
    stored = { key: storageKeys.batchArchive(batchId), bytes: file.bytes.length, filename: file.filename };
    await deps.objects.put(stored.key, file.bytes, 'application/zip');
  } else {
    if (!deps.openUpload) throw new BadRequestError('upload_id is not accepted here');
    stored = await deps.openUpload(caller, request.archive.uploadId, 'archive');
  }
  let files: number;
  try {
    const opened = await deps.archives.open(stored.key, limits);
    files = opened.listing.files.length;
    await opened.close();
    if (files === 0) {
      throw new BadRequestError(
        `archive holds no files to look at (${opened.listing.ignored} directories or hidden files ignored)`,
      );
    }
  } catch (error) {
    if (request.archive.kind === 'file') await deps.objects.delete(stored.key).catch(() => undefined);
    throw error;
  }

  // Stored beside the archive, so it lives as long as the batch whose item jobs read it.
  const backgroundKey = background
    ? storageKeys.batchBackground(batchId, extensionOf(background.type))
    : null;
  if (background && backgroundKey)
    await deps.objects.put(backgroundKey, background.file.bytes, background.type);
  const now = deps.clock.now().toISOString();
  const defaults = defaultsOf(caller);
  const batch: Batch = {
    id: batchId,
    ownerId: ownerIdOf(caller),
    account,
    operation: request.operation,
    // Item jobs send no webhook each: the batch sends one when it finishes.
    params: {
      ...resolveParams(
        { ...request.requested, ...(backgroundKey ? { backgroundFileKey: backgroundKey } : {}) },
        defaults,
      ),
      webhookUrl: null,
    },
    webhookUrl: defaults.webhookUrl ?? null,
    status: 'unpacking',
    pauseReason: null,
    concurrency: deps.batchConcurrency,
    archive: { name: stored.filename, bytes: stored.bytes, key: stored.key },
    error: null,
    total: files,
    skipped: 0,
    queue: [],
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
  await deps.batches.create(batch, []);
  // A start that fails leaves an `unpacking` batch that does not move: the sweeper starts it again.
  await deps.archiveWorkflow
    .start(unpackExecution(batchId), { task: 'unpack', batchId })
    .catch(() => undefined);
  return { batch: (await deps.batches.get(batchId)) ?? batch, items: await deps.batches.items(batchId) };
}
