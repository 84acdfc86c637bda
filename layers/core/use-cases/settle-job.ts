import { jobErrorFromFailure } from '../errors.ts';
import type { Job } from '../jobs/job.ts';
import { isTerminal } from '../jobs/job.ts';
import { failJob, finishCancelled, succeedJob } from '../jobs/transitions.ts';
import type { FileRepository } from '../ports.ts';
import type { WorkflowDeps } from './prepare-job.ts';
import { registerResultFiles } from './register-result-files.ts';
import type { InferenceResult } from './run-inference.ts';
import { settlementOf, updateJob } from './update-job.ts';

export interface SettleDeps extends WorkflowDeps {
  files: FileRepository;
  /** Moves a batch on once one of its item jobs has settled (use-cases/advance-batch.ts); optional. */
  advanceBatch?: (batchId: string, settled: Job) => Promise<unknown>;
}

export type Settlement =
  | { jobId: string; outcome: 'success'; result: InferenceResult }
  | { jobId: string; outcome: 'failure'; failure?: { Error?: string; Cause?: string } };

/**
 * Last workflow step: decide the job's final status and move its credits in the same write.
 * Runs exactly once in effect: a repeated call finds the job terminal and changes nothing.
 * A cancellation requested while the job ran wins over its result, and releases the credits.
 * A success also lists the result files among the owner's files.
 */
export async function settleJob(deps: SettleDeps, settlement: Settlement): Promise<Job> {
  if (settlement.outcome === 'success') await registerFilesBeforeSuccess(deps, settlement);
  const job = await updateJob(deps, settlement.jobId, (job) => {
    if (isTerminal(job.status)) return null;
    const now = deps.clock.now().toISOString();
    if (job.cancelRequested) {
      return { after: finishCancelled(job, now), movement: settlementOf(job, 'release') };
    }
    if (settlement.outcome === 'success') {
      return { after: succeedJob(job, settlement.result.output, now), movement: settlementOf(job, 'charge') };
    }
    return {
      after: failJob(job, jobErrorFromFailure(settlement.failure), now),
      movement: settlementOf(job, 'release'),
    };
  });
  // Also on a repeated settlement: the batch step is idempotent, and a lost one is made up this way.
  if (job.batch && deps.advanceBatch) await deps.advanceBatch(job.batch.id, job);
  return job;
}

/**
 * The owner's file records go in before the job shows success, so a client that sees `success` finds
 * its files at once. A repeated settlement registers nothing twice, and a crash between the two writes
 * is made up by the retried step, which finds the job still processing.
 */
async function registerFilesBeforeSuccess(
  deps: SettleDeps,
  settlement: Extract<Settlement, { outcome: 'success' }>,
) {
  const job = await deps.jobs.get(settlement.jobId);
  if (job?.status !== 'processing' || job.cancelRequested) return;
  const finishing = succeedJob(job, settlement.result.output, deps.clock.now().toISOString());
  await registerResultFiles(deps, finishing, settlement.result.files);
}
