import { deps } from '#aws/wiring.ts';
import { prepareJob, type WorkOrder } from '#core/use-cases/run-workflow.ts';

export const handler = async (event: { jobId: string }): Promise<WorkOrder> =>
  prepareJob(deps(), event.jobId);
