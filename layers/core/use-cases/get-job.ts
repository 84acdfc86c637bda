import { NotFoundError } from '../errors.ts';
import type { Job } from '../jobs/job.ts';
import { type Caller, mayAccess } from '../keys/caller.ts';
import type { JobRepository } from '../ports.ts';

/**
 * Read a job the caller may see. Another owner's job answers 404, not 403, so that job ids cannot
 * be probed. The master key sees every job.
 */
export async function getOwnJob(deps: { jobs: JobRepository }, caller: Caller, jobId: string): Promise<Job> {
  const job = await deps.jobs.get(jobId);
  if (!job || !mayAccess(caller, job)) {
    throw new NotFoundError(`Job ${jobId} does not exist`);
  }
  return job;
}
