import type { Batch } from '#core/batches/batch.ts';
import type { Job } from '#core/jobs/job.ts';
import { advanceBatch } from '#core/use-cases/advance-batch.ts';
import { notifyBatchFinished } from '#core/use-cases/notify-batch.ts';
import { deps, type Wiring } from './wiring.ts';

export type BatchWiring = Wiring & {
  batchFinished(batch: Batch): Promise<void>;
  advanceBatch(batchId: string, settled: Job): Promise<unknown>;
};

let instance: BatchWiring | undefined;

/**
 * The wiring plus the two hooks batches add: `batchFinished` sends the batch webhook, `advanceBatch`
 * lets settlement move an item's batch on. The webhook is best effort: its failure is logged, and never
 * undoes or repeats the step that finished the batch.
 */
export const batchDeps = (): BatchWiring => {
  if (instance) return instance;
  const base = deps();
  const wired: BatchWiring = {
    ...base,
    async batchFinished(batch) {
      try {
        const sent = await notifyBatchFinished(base, batch);
        if (sent) console.log(JSON.stringify({ level: 'info', batch: batch.id, webhook: sent }));
      } catch (error) {
        console.error(JSON.stringify({ level: 'error', batch: batch.id, webhook: String(error) }));
      }
    },
    advanceBatch: (batchId, settled) => advanceBatch(wired, batchId, { settled }),
  };
  instance = wired;
  return wired;
};
