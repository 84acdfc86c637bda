import { deps } from '#aws/wiring.ts';
import type { WorkOrder } from '#core/use-cases/run-inference.ts';
import { prepareJob } from '#core/use-cases/run-workflow.ts';

export const handler = async (event: { jobId: string }): Promise<WorkOrder> =>
  prepareJob(deps(), event.jobId);
