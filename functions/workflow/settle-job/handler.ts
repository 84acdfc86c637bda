import { type Settlement, settleJob } from '#core/use-cases/run-workflow.ts';
import { settleDeps } from '#wiring/workflow.ts';

export const handler = async (event: Settlement): Promise<{ jobId: string; status: string }> => {
  const job = await settleJob(settleDeps(), event);
  return { jobId: job.id, status: job.status };
};
