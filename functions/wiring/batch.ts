import { logger } from '#aws/observability.ts';
import type { Batch } from '#core/batches/batch.ts';
import type { Job } from '#core/jobs/job.ts';
import { advanceBatch, type BatchDeps } from '#core/use-cases/advance-batch.ts';
import { type NotifyBatchDeps, notifyBatchFinished } from '#core/use-cases/notify-batch.ts';

/**
 * Adds the two hooks batches need: `batchFinished` sends the batch webhook, `advanceBatch` lets
 * settlement move an item's batch on. The webhook is best effort: its failure is logged, and never
 * undoes or repeats the step that finished the batch.
 */
export function withBatchHooks<D extends Omit<BatchDeps, 'batchFinished'> & NotifyBatchDeps>(base: D) {
  const wired: D & {
    batchFinished(batch: Batch): Promise<void>;
    advanceBatch(batchId: string, settled: Job): Promise<unknown>;
  } = {
    ...base,
    async batchFinished(batch) {
      try {
        const sent = await notifyBatchFinished(base, batch);
        if (sent) logger.info('batch webhook sent', { batch_id: batch.id, webhook: sent });
      } catch (error) {
        logger.error('batch webhook not sent', { batch_id: batch.id, error: String(error) });
      }
    },
    advanceBatch: (batchId, settled) => advanceBatch(wired, batchId, { settled }),
  };
  return wired;
}
