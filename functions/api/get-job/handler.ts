import { getOwnJob } from '#core/use-cases/get-job.ts';
import { jobResponse } from '#http/job-response.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, path }) =>
  jobResponse(deps(), 200, await getOwnJob(deps(), caller, path.job_id)),
);
