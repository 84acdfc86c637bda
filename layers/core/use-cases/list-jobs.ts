import * as z from 'zod';
import { builtOnFirstUse } from '../built-on-first-use.ts';
import { JOB_STATUSES } from '../jobs/job.ts';
import { type Caller, ownerIdOf } from '../keys/caller.ts';
import type { JobRepository } from '../ports.ts';

const MAX_JOB_PAGE = 100;
const between = `limit must be an integer between 1 and ${MAX_JOB_PAGE}`;
const cursor = 'before must be a positive integer';

/** The query of GET /jobs; each message names its parameter, as the 400 that refuses it says. */
export const listJobsQuery = builtOnFirstUse(() =>
  z.object({
    limit: z.coerce
      .number({ error: between })
      .int({ error: between })
      .min(1, { error: between })
      .max(MAX_JOB_PAGE, { error: between })
      .default(25),
    before: z.coerce.number({ error: cursor }).int({ error: cursor }).positive({ error: cursor }).optional(),
    status: z.enum(JOB_STATUSES, { error: `status must be one of ${JOB_STATUSES.join(', ')}` }).optional(),
  }),
);

/** The caller's own jobs, newest first, a page at a time (spec: GET /jobs). */
export async function listJobs(
  deps: { jobs: JobRepository },
  caller: Caller,
  query: z.output<ReturnType<typeof listJobsQuery>>,
) {
  return deps.jobs.listByOwner(ownerIdOf(caller), {
    limit: query.limit,
    before: query.before ?? null,
    status: query.status ?? null,
  });
}
