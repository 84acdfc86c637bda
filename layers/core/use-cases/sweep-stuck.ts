import type { Batch } from '../batches/batch.ts';
import type { Job, JobError } from '../jobs/job.ts';
import { failJob } from '../jobs/transitions.ts';
import type { ActiveWork, ArchiveWorkflow, FollowUpStarter, WorkflowStarter } from '../ports.ts';
import { advanceBatch, type BatchDeps } from './advance-batch.ts';
import { unpackExecution } from './create-batch.ts';
import { failUnpacking } from './unpack-batch.ts';
import { settlementOf, updateJob } from './update-job.ts';

export interface SweepDeps extends BatchDeps {
  workflow: WorkflowStarter;
  archiveWorkflow: ArchiveWorkflow;
  followUps: FollowUpStarter;
  active: ActiveWork;
}

/**
 * AWS's limit on an Express execution, which a job's run is (lib/config.ts sets the state machine's timeout
 * from it): past it the run is cut, and nothing but the sweeper moves a job it left processing.
 */
export const JOB_RUN_LIMIT_SECONDS = 300;

/**
 * How long work may go without moving before the sweeper looks at it. A queued job's execution starts
 * within seconds of its creation; a job's run ends within JOB_RUN_LIMIT_SECONDS of its start (its
 * settlement, when that fails, goes on in a follow-up, which a sweeper's failure leaves without effect);
 * unpacking runs in a 15-minute function.
 */
export const DEADLINES = {
  queuedMs: 2 * 60_000,
  /** A job still queued this long after its creation was started again often enough: it is failed. */
  queuedGiveUpMs: 30 * 60_000,
  /** Twice a run's limit: a job processing this long has no run left that could end it. */
  processingMs: 2 * JOB_RUN_LIMIT_SECONDS * 1000,
  unpackingMs: 2 * 60_000,
  quietBatchMs: 2 * 60_000,
} as const;

export const STUCK_ERROR: JobError = {
  code: 500,
  message: 'The job did not finish within its deadline; it was stopped and no credits were charged',
};

export interface SweepReport {
  restarted: string[];
  failed: string[];
  /** Jobs failed by an earlier sweep whose follow-up could not be started then, started now. */
  handedOver: string[];
  batchesAdvanced: string[];
  batchesFailed: string[];
}

/**
 * Find work that has not moved past its deadline and move it on (scheduled every few minutes in AWS,
 * every minute and at start locally). Every write is conditional on the record's version, and every
 * start names its execution, so two sweepers running at once move each thing once:
 * 1. A job queued past its deadline is started again: the job workflow is Express, whose executions can
 *    be neither looked up nor told apart by name, and whose steps leave a repeated run without effect.
 *    One queued past the give-up deadline (its runs ended without moving it) is failed.
 * 2. A job processing past the workflow's bound is failed with `error.code` 500 and its reservation
 *    released, in one versioned write; a batch item's batch is told, as settlement would.
 *    A job failed here (1 or 2) is handed to its run's follow-up, which delivers its `job.failed` webhook and
 *    event as the run would have: a receiver is never left waiting on a job that ended. The failure's write
 *    marks the follow-up as owed (`followUpDue`) until it is started, so a start that fails is tried again.
 * 3. A batch unpacking past its deadline gets its unpacking started again, or failed when that
 *    execution has ended; a processing batch that has been quiet is advanced (its ended items recorded,
 *    its waiting items started).
 */
export async function sweepStuck(deps: SweepDeps): Promise<SweepReport> {
  const report: SweepReport = {
    restarted: [],
    failed: [],
    handedOver: [],
    batchesAdvanced: [],
    batchesFailed: [],
  };
  const now = deps.clock.now().getTime();
  for (const job of await deps.active.activeJobs()) {
    const outcome = await sweepJob(deps, job, now);
    if (outcome === 'restarted') report.restarted.push(job.id);
    if (outcome === 'failed') report.failed.push(job.id);
    if (outcome === 'handed-over') report.handedOver.push(job.id);
  }
  for (const batch of await deps.active.activeBatches()) {
    const outcome = await sweepBatch(deps, batch, now);
    if (outcome === 'advanced') report.batchesAdvanced.push(batch.id);
    if (outcome === 'failed') report.batchesFailed.push(batch.id);
  }
  return report;
}

async function sweepJob(
  deps: SweepDeps,
  job: Job,
  now: number,
): Promise<'restarted' | 'failed' | 'handed-over' | null> {
  if (job.status === 'failed' && job.followUpDue !== undefined) {
    await handOver(deps, job.id, job.followUpDue);
    return 'handed-over';
  }
  const attempt = job.retries + 1;
  if (job.status === 'queued') {
    const queued = now - Date.parse(job.createdAt);
    if (queued < DEADLINES.queuedMs) return null;
    if (queued < DEADLINES.queuedGiveUpMs) {
      await deps.workflow.start(job.id, attempt);
      return 'restarted';
    }
    return (await failStuck(deps, job.id, 'queued', attempt)) ? 'failed' : null;
  }
  if (job.status === 'processing') {
    if (now - Date.parse(job.startedAt ?? job.createdAt) < DEADLINES.processingMs) return null;
    return (await failStuck(deps, job.id, 'processing', attempt)) ? 'failed' : null;
  }
  return null;
}

/** Fail the job if it is still where the sweeper found it; true when this call made the move. */
async function failStuck(
  deps: SweepDeps,
  jobId: string,
  status: 'queued' | 'processing',
  attempt: number,
): Promise<boolean> {
  let moved = false;
  const job = await updateJob(deps, jobId, (current) => {
    // Decided again on every re-read: only the write that lands counts as this sweeper's move.
    moved = current.status === status;
    if (!moved) return null;
    return {
      // Owed until the follow-up is started: a start that fails now is tried again by the next sweep.
      after: { ...failJob(current, STUCK_ERROR, deps.clock.now().toISOString()), followUpDue: attempt },
      movement: settlementOf(current, 'release'),
    };
  });
  if (!moved) return false;
  if (job.batch) await advanceBatch(deps, job.batch.id, { settled: job });
  await handOver(deps, job.id, attempt);
  return true;
}

/**
 * Start the attempt's follow-up, then record that it is no longer owed. Two sweepers may both start it: the
 * follow-up is named after the run, so the second start is refused and leaves the first as it is.
 */
async function handOver(deps: SweepDeps, jobId: string, attempt: number): Promise<void> {
  await deps.followUps.deliver(jobId, attempt);
  await updateJob(deps, jobId, (current) =>
    current.followUpDue === attempt
      ? { after: { ...current, followUpDue: undefined }, movement: null }
      : null,
  );
}

async function sweepBatch(deps: SweepDeps, batch: Batch, now: number): Promise<'advanced' | 'failed' | null> {
  const quiet = now - Date.parse(batch.updatedAt);
  if (batch.status === 'unpacking') {
    if (quiet < DEADLINES.unpackingMs) return null;
    const state = await deps.archiveWorkflow.start(unpackExecution(batch.id), {
      task: 'unpack',
      batchId: batch.id,
    });
    if (state === 'running') return null;
    // The execution ended and the batch is still unpacking: its last step was lost.
    const failed = await failUnpacking(deps, batch.id, {
      code: 500,
      message: 'The archive could not be unpacked in time',
    });
    return failed?.status === 'failed' ? 'failed' : null;
  }
  if (batch.status === 'processing' && quiet >= DEADLINES.quietBatchMs) {
    const after = await advanceBatch(deps, batch.id, { heal: true });
    return after.version !== batch.version ? 'advanced' : null;
  }
  return null;
}
