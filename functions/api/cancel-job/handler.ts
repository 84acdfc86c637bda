import { cancelOwnJob } from '#core/use-cases/control-job.ts';
import { jobResponse } from '#http/job-response.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, path }) => {
  const { status, job } = await cancelOwnJob(deps(), caller, path.job_id);
  return jobResponse(deps(), status, job);
});
