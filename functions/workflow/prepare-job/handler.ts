import type { WorkOrder } from '#core/use-cases/run-inference.ts';
import { prepareJob } from '#core/use-cases/run-workflow.ts';
import { prepareDeps } from '#wiring/workflow.ts';

export const handler = async (event: { jobId: string }): Promise<WorkOrder> =>
  prepareJob(prepareDeps(), event.jobId);
