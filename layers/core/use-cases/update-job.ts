import { NotFoundError, TransientError } from '../errors.ts';
import type { Job } from '../jobs/job.ts';
import type { CreditMovement, JobRepository } from '../ports.ts';

const MAX_WRITE_ATTEMPTS = 5;

export interface JobDecision {
  after: Job;
  movement: CreditMovement | null;
}

/**
 * Apply `decide` to the current job and store the result with its credit movement, re-reading and
 * deciding again when a concurrent writer got there first. `decide` returning null means "leave it".
 */
export async function updateJob(
  deps: { jobs: JobRepository },
  jobId: string,
  decide: (job: Job) => JobDecision | null,
): Promise<Job> {
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const job = await deps.jobs.get(jobId);
    if (!job) throw new NotFoundError(`Job ${jobId} does not exist`);
    const decision = decide(job);
    if (!decision) return job;
    const after = { ...decision.after, version: job.version + 1 };
    if (await deps.jobs.update(job, after, decision.movement)) return after;
  }
  throw new TransientError(`Job ${jobId} kept changing while it was being updated`);
}

/** The movement that settles a job's reservation: charged on success, given back otherwise. */
export const settlementOf = (job: Job, kind: 'charge' | 'release'): CreditMovement | null =>
  job.account && job.reservedCredits > 0
    ? { account: job.account, amount: job.reservedCredits, kind, jobId: job.id, jobVersion: job.version + 1 }
    : null;
