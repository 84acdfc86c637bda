import { BATCH_ID, type Batch, type BatchAction, itemStatusOf } from '../batches/batch.ts';
import { cancelBatch, pauseBatch, resumeBatch, retryBatch } from '../batches/transitions.ts';
import { NotFoundError, TransientError } from '../errors.ts';
import { isTerminal } from '../jobs/job.ts';
import { cancelJob } from '../jobs/transitions.ts';
import { type Caller, mayAccess } from '../keys/caller.ts';
import type { BatchRepository, Clock } from '../ports.ts';
import { advanceBatch, type BatchDeps } from './advance-batch.ts';
import { settlementOf, updateJob } from './update-job.ts';

const MAX_WRITE_ATTEMPTS = 5;

/** A batch the caller may see: another owner's batch is 404 like an unknown one; the master key sees all. */
export async function getOwnBatch(
  deps: { batches: BatchRepository },
  caller: Caller,
  batchId: string,
): Promise<Batch> {
  const batch = BATCH_ID.test(batchId) ? await deps.batches.get(batchId) : null;
  if (!batch || !mayAccess(caller, batch)) {
    throw new NotFoundError(`Batch ${batchId} does not exist`);
  }
  return batch;
}

/** A processing batch that has not changed for this long is checked for a lost step when it is read. */
const QUIET_MS = 30_000;

/**
 * Read a batch with its items (GET /batches/{batch_id}).
 * 1. 404 for an unknown batch or another owner's.
 * 2. A processing batch that has been quiet for long, or has items waiting and none running, is advanced
 *    first: a step lost to a crash (a settlement that could not move the batch on) is made up here.
 *    Reads of a batch that moves normally write nothing; a heal that loses to concurrent writers is
 *    given up, and the batch is answered as read.
 */
export async function readBatch(deps: BatchDeps, caller: Caller, batchId: string) {
  let batch = await getOwnBatch(deps, caller, batchId);
  const quiet = deps.clock.now().getTime() - Date.parse(batch.updatedAt) > QUIET_MS;
  const stuck = batch.running.length === 0 && batch.queue.length > 0;
  if (batch.status === 'processing' && (quiet || stuck)) {
    // Healing is the read's courtesy, not its job: when it keeps losing to other writers, those writers
    // are moving the batch, so the read answers what it sees instead of a 503.
    batch = await advanceBatch(deps, batchId, { heal: true }).catch(async (error: unknown) => {
      if (!(error instanceof TransientError)) throw error;
      return getOwnBatch(deps, caller, batchId);
    });
  }
  return { batch, items: await deps.batches.items(batchId) };
}

/**
 * Pause, resume, cancel or retry a batch (POST /batches/{batch_id}/{action}); the moves are in
 * layers/core/batches/transitions.ts and docs/decisions/0033-batch-states-and-moves.md.
 * 1. 404 for an unknown batch or another owner's; 409 for a move its status does not allow.
 * 2. Write the move under the batch's version, re-deciding on a concurrent change.
 * 3. cancel: ask each running item's job to cancel (a queued job is cancelled and released at once,
 *    a processing one at its next step); waiting items were cancelled by the move itself.
 * 4. Advance the batch: resume and retry start items now, and every move records what has ended.
 */
export async function controlBatch(deps: BatchDeps, caller: Caller, batchId: string, action: BatchAction) {
  await getOwnBatch(deps, caller, batchId);
  const now = deps.clock.now().toISOString();
  const { before, after } = await updateBatch(deps, batchId, async (batch) => {
    switch (action) {
      case 'pause':
        return pauseBatch(batch);
      case 'resume':
        return resumeBatch(batch);
      case 'cancel':
        return cancelBatch(batch, now);
      case 'retry': {
        const statusOf = itemStatusOf(batch);
        const items = await deps.batches.items(batchId);
        return retryBatch(
          batch,
          items.filter((item) => statusOf(item) === 'failed').map((item) => item.index),
        );
      }
    }
  });
  if (action === 'cancel' && before.status !== 'cancelled') {
    for (const entry of after.running) await requestJobCancel(deps, entry.jobId);
    if (after.running.length === 0) await deps.batchFinished?.(after);
  }
  const batch = await advanceBatch(deps, batchId, { heal: true });
  return { batch, items: await deps.batches.items(batchId) };
}

async function updateBatch(
  deps: { batches: BatchRepository; clock: Clock },
  batchId: string,
  decide: (batch: Batch) => Promise<Batch>,
): Promise<{ before: Batch; after: Batch }> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const before = await deps.batches.get(batchId);
    if (!before) throw new NotFoundError(`Batch ${batchId} does not exist`);
    const decided = await decide(before);
    if (decided === before) return { before, after: before };
    const after = { ...decided, updatedAt: deps.clock.now().toISOString() };
    if (await deps.batches.update(before, after))
      return { before, after: { ...after, version: before.version + 1 } };
  }
  throw new TransientError(`Batch ${batchId} kept changing while it was being updated`);
}

/** As POST /jobs/{job_id}/cancel does it, minus the answer: a finished job is simply left alone. */
async function requestJobCancel(deps: BatchDeps, jobId: string): Promise<void> {
  await updateJob(deps, jobId, (current) => {
    if (isTerminal(current.status) || current.cancelRequested) return null;
    const { job } = cancelJob(current, deps.clock.now().toISOString());
    return { after: job, movement: current.status === 'queued' ? settlementOf(current, 'release') : null };
  });
}
