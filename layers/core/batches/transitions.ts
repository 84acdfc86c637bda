import { ConflictError } from '../errors.ts';
import type { Batch, BatchItem, ItemOutcome, PauseReason } from './batch.ts';

/**
 * The batch state machine as pure functions. Each returns the batch after the move, or the same
 * object when the move changes nothing (repeating pause, resume or cancel is harmless), and throws
 * ConflictError (409) for a move that makes no sense in the batch's status.
 */

function refuse(batch: Batch, move: string, why = ''): never {
  throw new ConflictError(`Batch ${batch.id} is ${batch.status}; it cannot ${move}${why}`);
}

/** Stop starting items; the running ones finish. */
export function pauseBatch(batch: Batch): Batch {
  if (batch.status === 'paused') return batch;
  if (batch.status !== 'processing') refuse(batch, 'be paused');
  return { ...batch, status: 'paused', pauseReason: 'requested' };
}

/** Start items again (also after a pause for credits, once the account has them). */
export function resumeBatch(batch: Batch): Batch {
  if (batch.status === 'processing') return batch;
  if (batch.status !== 'paused') refuse(batch, 'be resumed');
  return { ...batch, status: 'processing', pauseReason: null };
}

/**
 * Stop for good: waiting items are cancelled without ever reserving anything. Running items are the
 * caller's to cancel (their jobs release their credits when they settle as cancelled).
 */
export function cancelBatch(batch: Batch, now: string): Batch {
  if (batch.status === 'cancelled') return batch;
  if (batch.status === 'completed' || batch.status === 'failed')
    refuse(batch, 'be cancelled', ': it has finished');
  return {
    ...batch,
    status: 'cancelled',
    pauseReason: null,
    queue: [],
    neverRan: [...batch.neverRan, ...batch.queue],
    cancelled: batch.cancelled + batch.queue.length,
    revision: batch.revision + 1,
    finishedAt: now,
  };
}

/**
 * Queue the failed items again; each gets a new job and a new reservation when its turn comes.
 * A completed batch runs again; a processing or paused one keeps its status.
 */
export function retryBatch(batch: Batch, failed: readonly number[]): Batch {
  if (batch.status === 'cancelled' || batch.status === 'failed' || batch.status === 'unpacking')
    refuse(batch, 'be retried');
  if (failed.length === 0) refuse(batch, 'be retried', ': no item has failed');
  const reopened = batch.status === 'completed';
  return {
    ...batch,
    status: reopened ? 'processing' : batch.status,
    queue: [...batch.queue, ...failed],
    failed: batch.failed - failed.length,
    revision: reopened ? batch.revision + 1 : batch.revision,
    finishedAt: reopened ? null : batch.finishedAt,
  };
}

/** The next waiting item becomes a running job. */
export function startNextItem(batch: Batch, jobId: string, now: string): Batch {
  const [item, ...rest] = batch.queue;
  if (batch.status !== 'processing' || item === undefined) refuse(batch, 'start an item');
  return {
    ...batch,
    queue: rest,
    running: [...batch.running, { item, jobId }],
    startedAt: batch.startedAt ?? now,
  };
}

/** The running item's job ended: count it, and its charge if it succeeded. */
export function recordOutcome(
  batch: Batch,
  item: BatchItem,
  outcome: ItemOutcome,
  charged: number,
): { batch: Batch; item: BatchItem } {
  if (!batch.running.some((entry) => entry.item === item.index && entry.jobId === outcome.jobId)) {
    throw new ConflictError(
      `Job ${outcome.jobId} is not running for item ${item.index} of batch ${batch.id}`,
    );
  }
  return {
    batch: {
      ...batch,
      running: batch.running.filter((entry) => entry.item !== item.index),
      succeeded: batch.succeeded + (outcome.status === 'succeeded' ? 1 : 0),
      failed: batch.failed + (outcome.status === 'failed' ? 1 : 0),
      cancelled: batch.cancelled + (outcome.status === 'cancelled' ? 1 : 0),
      chargedCredits: batch.chargedCredits + charged,
      revision: batch.revision + 1,
    },
    item: { ...item, attempts: item.attempts + 1, outcome },
  };
}

/** Nothing waits and nothing runs: the batch is done, whether it was processing or paused. */
export function completeBatch(batch: Batch, now: string): Batch {
  if (!isDone(batch)) refuse(batch, 'complete', ': items are still waiting or running');
  return { ...batch, status: 'completed', pauseReason: null, revision: batch.revision + 1, finishedAt: now };
}

export const isDone = (batch: Batch): boolean =>
  (batch.status === 'processing' || batch.status === 'paused') &&
  batch.queue.length === 0 &&
  batch.running.length === 0;

/** The service paused the batch: the account cannot pay for, or hold, one more job right now. */
export function pauseFor(batch: Batch, reason: Exclude<PauseReason, 'requested'>): Batch {
  if (batch.status !== 'processing') refuse(batch, 'be paused');
  return { ...batch, status: 'paused', pauseReason: reason };
}
