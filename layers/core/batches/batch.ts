import { API_PREFIX, effectiveBackground, resultPath } from '../jobs/envelope.ts';
import { newJobId } from '../jobs/ids.ts';
import type { AccountRef, Job, JobError, JobOutput, JobParams, StoredSource } from '../jobs/job.ts';
import { costOf, type Operation } from '../jobs/operations.ts';

/**
 * A batch: the photos of one ZIP archive, each processed as an ordinary job when its turn comes.
 * `unpacking` while a workflow step reads the archive from storage and stores its photos;
 * `processing` starts items while fewer than `concurrency` run; `paused` starts none and lets the
 * running ones finish; `completed`, `cancelled` and `failed` (the archive could not be unpacked) are
 * final (docs/decisions/0033-batch-states-and-moves.md).
 */
export const BATCH_STATUSES = [
  'unpacking',
  'processing',
  'paused',
  'completed',
  'cancelled',
  'failed',
] as const;
type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Why a batch is paused: its owner asked, the account ran out of credits, or of job slots (429). */
export const PAUSE_REASONS = ['requested', 'insufficient_credits', 'too_many_jobs'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const ITEM_STATUSES = ['queued', 'processing', 'succeeded', 'failed', 'cancelled', 'skipped'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

export const BATCH_ACTIONS = ['pause', 'resume', 'cancel', 'retry'] as const;
export type BatchAction = (typeof BATCH_ACTIONS)[number];

export interface Batch {
  id: string;
  ownerId: string;
  account: AccountRef;
  operation: Operation;
  /** What every item's job runs with; item jobs carry no webhook of their own. */
  params: JobParams;
  /** Receives the batch's final state (the key's default webhook when the batch was created). */
  webhookUrl: string | null;
  status: BatchStatus;
  pauseReason: PauseReason | null;
  /** How many items may run at once. */
  concurrency: number;
  /** The archive as received; `key` is where it is stored until it has been unpacked. */
  archive: { name: string | null; bytes: number; key?: string };
  /** Why the archive could not be unpacked (status `failed`); null otherwise. */
  error?: JobError | null;
  total: number;
  skipped: number;
  /** Items waiting to start, in the order they will start. */
  queue: number[];
  /** Items whose job is queued or processing now, with that job. */
  running: Array<{ item: number; jobId: string }>;
  /** Items that never ran because the batch was cancelled first. */
  neverRan: number[];
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Credits charged for succeeded items so far. */
  chargedCredits: number;
  /** Moves with every recorded outcome and every final status; names the download of this state. */
  revision: number;
  createdAt: string;
  /** When the first item started. */
  startedAt: string | null;
  finishedAt: string | null;
  /** Last write; a processing batch quiet for long is checked for a lost step when it is read. */
  updatedAt: string;
  /** Optimistic-lock counter, as on jobs. */
  version: number;
}

/** How an item's last job ended. */
export interface ItemOutcome {
  jobId: string;
  status: 'succeeded' | 'failed' | 'cancelled';
  error: JobError | null;
  /** Result file names under `results/<jobId>/`, the main result first. */
  files: string[];
  finishedAt: string | null;
}

/** One file entry of the archive. */
export interface BatchItem {
  batchId: string;
  index: number;
  /** Its path in the archive, checked and normalised (`front/car1.jpg`). */
  name: string;
  /** Where the extracted photo is stored; null for a skipped entry. */
  source: StoredSource | null;
  /** Why the entry is not processed (not an image, a nested archive, unreadable); null for photos. */
  skipped: JobError | null;
  /** Jobs that ran to an end for this item. */
  attempts: number;
  outcome: ItemOutcome | null;
}

export const newBatchId = (): string => `bat_${newJobId().slice('job_'.length)}`;
export const BATCH_ID = /^bat_[0-9a-z]{24}$/;

export const batchPath = (batchId: string): string => `${API_PREFIX}/batches/${batchId}`;

export const isFinished = (batch: Batch): boolean =>
  batch.status === 'completed' || batch.status === 'cancelled' || batch.status === 'failed';

export function batchCounts(batch: Batch) {
  return {
    total: batch.total,
    skipped: batch.skipped,
    queued: batch.queue.length,
    processing: batch.running.length,
    succeeded: batch.succeeded,
    failed: batch.failed,
    cancelled: batch.cancelled,
  };
}

/** Where an item stands, from the batch's lists (which move under its lock) and the item's last outcome. */
export function itemStatusOf(batch: Batch): (item: BatchItem) => ItemStatus {
  const running = new Set(batch.running.map((entry) => entry.item));
  const queued = new Set(batch.queue);
  const neverRan = new Set(batch.neverRan);
  return (item) => {
    if (item.skipped) return 'skipped';
    if (running.has(item.index)) return 'processing';
    if (queued.has(item.index)) return 'queued';
    if (neverRan.has(item.index)) return 'cancelled';
    return item.outcome?.status ?? 'queued';
  };
}

/** The result file names of a finished job, main result first. */
function resultFilesOf(output: JobOutput | null): string[] {
  if (!output) return [];
  const paths = [output.url, output.mask_url, output.plate_mask_url, output.background_mask_url];
  const names = paths.filter((path): path is string => !!path).map((path) => path.split('/').pop()!);
  return [...new Set(names)];
}

export function outcomeOf(job: Job): ItemOutcome {
  return {
    jobId: job.id,
    status: job.status === 'success' ? 'succeeded' : job.status === 'failed' ? 'failed' : 'cancelled',
    error: job.error,
    files: job.status === 'success' ? resultFilesOf(job.output) : [],
    finishedAt: job.finishedAt,
  };
}

/** The Batch resource (spec 2.7, fields decided in docs/decisions/0033-batch-states-and-moves.md). */
export function batchResource(batch: Batch, items: BatchItem[]) {
  const statusOf = itemStatusOf(batch);
  const runningJob = new Map(batch.running.map((entry) => [entry.item, entry.jobId]));
  const self = batchPath(batch.id);
  return {
    id: batch.id,
    status: batch.status,
    pause_reason: batch.pauseReason,
    mode: batch.operation,
    background: effectiveBackground(batch.operation, batch.params),
    plate_color: batch.params.plateColor,
    concurrency: batch.concurrency,
    counts: batchCounts(batch),
    cost_credits: batch.chargedCredits,
    reserved_credits: batch.account ? batch.running.length * itemCost(batch) : 0,
    archive: { name: batch.archive.name, bytes: batch.archive.bytes },
    error: batch.error ?? null,
    created_at: batch.createdAt,
    started_at: batch.startedAt,
    finished_at: batch.finishedAt,
    items: items.map((item) => {
      const status = statusOf(item);
      const jobId = runningJob.get(item.index) ?? item.outcome?.jobId ?? null;
      const outcome = status === item.outcome?.status ? item.outcome : null;
      return {
        index: item.index,
        name: item.name,
        status,
        job_id: jobId,
        attempts: item.attempts + (status === 'processing' ? 1 : 0),
        error: item.skipped ?? (status === 'failed' ? (outcome?.error ?? null) : null),
        result:
          outcome?.status === 'succeeded' && outcome.files[0]
            ? resultPath(outcome.jobId, outcome.files[0])
            : null,
      };
    }),
    links: {
      self,
      pause: `${self}/pause`,
      resume: `${self}/resume`,
      cancel: `${self}/cancel`,
      retry: `${self}/retry`,
      download: `${self}/download`,
    },
  };
}

/** What one item's job reserves while it runs and is charged when it succeeds. */
export const itemCost = (batch: Batch): number => costOf(batch.operation);
