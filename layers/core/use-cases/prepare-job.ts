import { JobCancelledError } from '../errors.ts';
import { startJob } from '../jobs/transitions.ts';
import type { Clock, JobRepository } from '../ports.ts';
import { storageKeys } from '../storage-layout.ts';
import type { WorkOrder } from './run-inference.ts';
import { updateJob } from './update-job.ts';

export interface WorkflowDeps {
  jobs: JobRepository;
  clock: Clock;
}

/**
 * First workflow step.
 * 1. A job cancelled while queued stops here (settlement then has nothing left to do).
 * 2. A queued job moves to processing; a repeated delivery of this step finds it processing and goes on.
 */
export async function prepareJob(deps: WorkflowDeps, jobId: string): Promise<WorkOrder> {
  // A job already processing is this execution's own, run again (a retried step, or the local runner
  // resuming after a restart): its work order is handed out again instead of failing the job.
  const job = await updateJob(deps, jobId, (current) =>
    current.status === 'queued' && !current.cancelRequested
      ? { after: startJob(current, deps.clock.now().toISOString()), movement: null }
      : null,
  );
  if (job.status !== 'processing')
    throw new JobCancelledError(`Job ${jobId} is ${job.status}; nothing to do`);
  return {
    jobId: job.id,
    ownerId: job.ownerId,
    operation: job.operation,
    source: { key: job.source.key, contentType: job.source.contentType, sha256: job.source.sha256 },
    params: job.params,
    resultPrefix: storageKeys.resultPrefix(job.id),
  };
}
