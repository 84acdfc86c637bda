import { type Batch, type BatchItem, itemCost, outcomeOf } from '../batches/batch.ts';
import { completeBatch, isDone, pauseFor, recordOutcome, startNextItem } from '../batches/transitions.ts';
import { InsufficientCreditsError, NotFoundError, TooManyRequestsError, TransientError } from '../errors.ts';
import { newJobId, newSequence } from '../jobs/ids.ts';
import { isTerminal, type Job } from '../jobs/job.ts';
import type { BatchChanges, BatchRepository, Clock, JobRepository, WorkflowStarter } from '../ports.ts';
import { startOrFail } from './control-job.ts';

export interface BatchDeps {
  batches: BatchRepository;
  jobs: JobRepository;
  workflow: WorkflowStarter;
  clock: Clock;
  /** Told once when a batch has finished (the batch webhook); optional. */
  batchFinished?: (batch: Batch) => Promise<void>;
}

export interface AdvanceOptions {
  /** The item job whose settlement calls: its outcome is recorded without reading any other job. */
  settled?: Job;
  /**
   * Look at every running item's job (an outcome whose step was lost, an execution that never
   * started). The API paths do; settlement, which knows its own job, does not.
   */
  heal?: boolean;
}

/** A job queued this long without its execution having started it is started again (same name: a no-op if it runs). */
const STALE_START_MS = 60_000;
/** How long an ended job's own settlement has to record it before a healing call does. */
const SETTLE_GRACE_MS = 10_000;
/** Re-reads after a concurrent writer won; each batch has at most `concurrency` of those. */
const MAX_ATTEMPTS = 40;

type Blocked = 'insufficient_credits' | 'too_many_jobs' | null;

interface Step {
  after: Batch;
  changes: BatchChanges;
  /** The batch reaches its end with this write: `completed`, or `cancelled` with nothing left running. */
  finished: boolean;
}

/**
 * Move a batch on. Called when the batch is created, resumed, retried or cancelled, after every item
 * job settles, and when a processing batch has been quiet for long while it is read, so a lost call
 * heals itself. Each step is one write under the batch's version, so concurrent calls can neither start
 * an item twice nor lose an outcome; a call that loses the race re-reads and decides again.
 * 1. The settled item's job (or, when healing, any running item's job that has ended): record its
 *    outcome on the batch and the item, with its charge.
 * 2. While processing and fewer than `concurrency` items run: start the next waiting item, in the same
 *    write. Its job is inserted with its reservation exactly as POST /jobs does; a 402 pauses the batch
 *    (`insufficient_credits`), and so does a 429 when none of its own items is running (`too_many_jobs`).
 * 3. Nothing waits and nothing runs: the batch is completed, in the same write; `batchFinished` is told.
 */
export async function advanceBatch(
  deps: BatchDeps,
  batchId: string,
  options: AdvanceOptions = {},
): Promise<Batch> {
  const items = new Map<number, BatchItem>();
  const itemOf = async (index: number): Promise<BatchItem> => {
    let item = items.get(index);
    if (!item) {
      const read = await deps.batches.item(batchId, index);
      if (!read) throw new NotFoundError(`Item ${index} of batch ${batchId} does not exist`);
      items.set(index, read);
      item = read;
    }
    return item;
  };
  let settled = options.settled;
  let blocked: Blocked = null;
  // A call does its own share and leaves the rest to the settlements running beside it: one slot for a
  // settlement, the free slots for an API call. Without this an API call would chase a busy batch.
  let writesLeft: number | undefined;

  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const batch = await deps.batches.get(batchId);
    if (!batch) throw new NotFoundError(`Batch ${batchId} does not exist`);
    if (writesLeft === undefined) writesLeft = options.settled ? 2 : batch.concurrency + 2;
    if (writesLeft === 0) return batch;
    const ended = settled ?? (options.heal ? await endedJob(deps, batch) : undefined);
    const step = await plan(deps, batch, ended, blocked, itemOf);
    if (!step) return batch;
    try {
      if (!(await deps.batches.update(batch, step.after, step.changes))) continue;
      writesLeft--;
    } catch (error) {
      if (error instanceof InsufficientCreditsError) blocked = 'insufficient_credits';
      else if (error instanceof TooManyRequestsError) blocked = 'too_many_jobs';
      else throw error;
      continue;
    }
    if (step.changes.item) {
      items.set(step.changes.item.index, step.changes.item);
      if (settled?.id === step.changes.item.outcome?.jobId) settled = undefined;
    }
    if (step.changes.start) {
      items.delete(step.changes.start.job.batch!.item);
      // A job that cannot be started is failed with its credits released; the next step records it.
      const failed = await startOrFail(deps, step.changes.start.job, 1).then(
        () => false,
        () => true,
      );
      if (failed) settled = (await deps.jobs.get(step.changes.start.job.id)) ?? undefined;
    }
    if (step.finished) {
      const finished = { ...step.after, version: batch.version + 1 };
      await deps.batchFinished?.(finished);
      return finished;
    }
  }
  throw new TransientError(`Batch ${batchId} kept changing while it was being advanced`);
}

/**
 * The first running item whose job ended a while ago without its settlement having moved the batch on
 * (a job that ended just now is its settlement's to record); a job that never got its execution is
 * started again.
 */
async function endedJob(deps: BatchDeps, batch: Batch): Promise<Job | undefined> {
  const now = deps.clock.now().getTime();
  for (const entry of batch.running) {
    const job = await deps.jobs.get(entry.jobId);
    // The batch and its item's job are written in one transaction, so this is not expected; a read of
    // the batch must still answer the batch, and there is nothing here to heal.
    if (!job) continue;
    if (isTerminal(job.status) && now - Date.parse(job.finishedAt ?? job.createdAt) > SETTLE_GRACE_MS)
      return job;
    if (job.status === 'queued' && job.attempts === 0 && now - Date.parse(job.createdAt) > STALE_START_MS) {
      await deps.workflow.start(job.id, 1);
    }
  }
  return undefined;
}

/** The next write, or null when there is nothing to do now. */
async function plan(
  deps: BatchDeps,
  batch: Batch,
  ended: Job | undefined,
  blocked: Blocked,
  itemOf: (index: number) => Promise<BatchItem>,
): Promise<Step | null> {
  const now = deps.clock.now();
  let after = batch;
  const changes: BatchChanges = {};

  const entry = ended && batch.running.find((running) => running.jobId === ended.id);
  if (ended && entry && isTerminal(ended.status)) {
    const charged = ended.status === 'success' ? ended.chargedCredits : 0;
    const recorded = recordOutcome(after, await itemOf(entry.item), outcomeOf(ended), charged);
    after = recorded.batch;
    changes.item = recorded.item;
  }

  const room =
    after.status === 'processing' && after.running.length < after.concurrency && after.queue.length > 0;
  if (room && blocked === 'insufficient_credits') {
    after = pauseFor(after, 'insufficient_credits');
  } else if (room && blocked === 'too_many_jobs') {
    // The account's other jobs hold every slot. The batch's own running items call again when they
    // settle; with none running nobody would, so the batch pauses until its owner resumes it.
    if (after.running.length === 0) after = pauseFor(after, 'too_many_jobs');
  } else if (room) {
    const item = await itemOf(after.queue[0]!);
    if (!item.source) throw new NotFoundError(`Item ${item.index} of batch ${batch.id} has no stored photo`);
    const job = itemJob(after, item, now);
    after = startNextItem(after, job.id, job.createdAt);
    changes.start = {
      job,
      reservation: after.account
        ? {
            account: after.account,
            amount: job.reservedCredits,
            kind: 'reserve',
            jobId: job.id,
            jobVersion: 1,
          }
        : null,
    };
  }

  if (isDone(after)) after = completeBatch(after, now.toISOString());
  if (after === batch) return null;
  const finished =
    (after.status === 'completed' && batch.status !== 'completed') ||
    (after.status === 'cancelled' && after.running.length === 0 && batch.running.length > 0);
  return { after: { ...after, updatedAt: now.toISOString() }, changes, finished };
}

/** An item's job: an ordinary job, with the batch's parameters and the item's stored photo. */
function itemJob(batch: Batch, item: BatchItem, now: Date): Job {
  const cost = itemCost(batch);
  return {
    id: newJobId(),
    seq: newSequence(now.getTime()),
    ownerId: batch.ownerId,
    account: batch.account,
    route: 'jobs',
    operation: batch.operation,
    status: 'queued',
    stage: 'queued',
    cancelRequested: false,
    costCredits: cost,
    reservedCredits: batch.account ? cost : 0,
    chargedCredits: 0,
    attempts: 0,
    createdAt: now.toISOString(),
    startedAt: null,
    finishedAt: null,
    params: batch.params,
    source: item.source!,
    output: null,
    error: null,
    idempotencyKey: null,
    retries: 0,
    version: 1,
    batch: { id: batch.id, item: item.index },
  };
}
