import * as z from 'zod';
import { BadRequestError } from '../errors.ts';
import { JOB_STATUSES } from '../jobs/job.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { JobRepository } from '../ports.ts';

export const ListJobsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  before: z.coerce.number().int().positive().optional(),
  status: z.enum(JOB_STATUSES).optional(),
});

/** The caller's own jobs, newest first, a page at a time (spec: GET /jobs). */
export async function listJobs(
  deps: { jobs: JobRepository },
  caller: Caller,
  query: Record<string, unknown>,
) {
  const parsed = ListJobsQuery.safeParse(query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BadRequestError(`${issue.path.join('.')}: ${issue.message}`);
  }
  return deps.jobs.listByOwner(ownerIdOf(caller), {
    limit: parsed.data.limit,
    before: parsed.data.before ?? null,
    status: parsed.data.status ?? null,
  });
}
