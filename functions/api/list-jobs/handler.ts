import { jobResource } from '#core/jobs/envelope.ts';
import { listJobs } from '#core/use-cases/list-jobs.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, query }) => {
  const page = await listJobs(deps(), caller, query);
  const now = deps().clock.now();
  return json(200, { jobs: page.jobs.map((job) => jobResource(job, now)), next_cursor: page.nextCursor });
});
