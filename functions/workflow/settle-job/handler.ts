import middy from '@middy/core';
import { recordJobSettled } from '#aws/metrics.ts';
import { correlate, logger, observability } from '#aws/observability.ts';
import { type Settlement, settleJob } from '#core/use-cases/settle-job.ts';
import { settleDeps } from '#wiring/workflow.ts';

export const handler = middy<Settlement, { jobId: string; status: string }>()
  .use(observability((event: Settlement) => ({ jobId: event.jobId })))
  .handler(async (event) => {
    const job = await settleJob(settleDeps(), event);
    if (job.batch) correlate({ batchId: job.batch.id });
    recordJobSettled(job);
    // A failed job is an outcome the owner sees, not a fault of the service (that was logged when it happened).
    logger[job.status === 'failed' ? 'warn' : 'info']('job settled', {
      status: job.status,
      operation: job.operation,
      error: job.error ?? undefined,
    });
    return { jobId: job.id, status: job.status };
  });
