import { batchDeps } from '#aws/batch-wiring.ts';
import { type Settlement, settleJob } from '#core/use-cases/run-workflow.ts';

export const handler = async (event: Settlement): Promise<{ jobId: string; status: string }> => {
  const job = await settleJob(batchDeps(), event);
  return { jobId: job.id, status: job.status };
};
