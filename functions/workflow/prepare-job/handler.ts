import middy from '@middy/core';
import { observability } from '#aws/observability.ts';
import { prepareJob } from '#core/use-cases/prepare-job.ts';
import type { WorkOrder } from '#core/use-cases/run-inference.ts';
import { prepareDeps } from '#wiring/workflow.ts';

export const handler = middy<{ jobId: string }, WorkOrder>()
  .use(observability((event: { jobId: string }) => ({ jobId: event.jobId })))
  .handler(async (event) => prepareJob(prepareDeps(), event.jobId));
