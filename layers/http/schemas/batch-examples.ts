/**
 * An example batch, for the OpenAPI document. Apart from the schemas (./batch.ts), as ./job-examples.ts is:
 * the contracts that show it import this and not the schemas, which zod would build at their cold start.
 */
import { batchPath } from '#core/batches/batch.ts';
import { resultPath } from '#core/jobs/envelope.ts';
import { PRICES } from '#core/jobs/operations.ts';
import { DEFAULT_PLATE_COLOR } from '#core/jobs/params.ts';

export const BATCH_EXAMPLE_ID = 'bat_4n8c2v6x1z3q5w7e9r0t2y4u';

/** An example batch of three photos, `unpacking` (no items yet) or `completed`. */
export const batchExample = (state: 'unpacking' | 'completed') => {
  const done = state === 'completed';
  const names = ['front.jpg', 'side/left.jpg', 'rear.jpg'];
  const jobIds = [
    'job_2c4v6b8n0m1q3w5e7r9t1y3u',
    'job_5t7y9u1i3o5p7a9s1d3f5g7h',
    'job_8k0l2z4x6c8v0b2n4m6q8w0e',
  ];
  // Items appear once the archive is unpacked.
  const items = done
    ? names.map((name, index) => ({
        index,
        name,
        status: 'succeeded',
        job_id: jobIds[index]!,
        attempts: 1,
        error: null,
        result: resultPath(jobIds[index]!, 'result.jpg'),
      }))
    : [];
  const path = batchPath(BATCH_EXAMPLE_ID);
  return {
    id: BATCH_EXAMPLE_ID,
    status: state,
    pause_reason: null,
    mode: 'plate',
    background: 'studio',
    plate_color: DEFAULT_PLATE_COLOR,
    concurrency: 2,
    counts: {
      total: 3,
      skipped: 0,
      queued: 0,
      processing: 0,
      succeeded: done ? 3 : 0,
      failed: 0,
      cancelled: 0,
    },
    cost_credits: done ? 3 * PRICES.edit : 0,
    reserved_credits: 0,
    archive: { name: 'cars.zip', bytes: 1_482_113 },
    error: null,
    created_at: '2026-11-24T09:31:00.000Z',
    started_at: done ? '2026-11-24T09:31:00.920Z' : null,
    finished_at: done ? '2026-11-24T09:31:08.940Z' : null,
    items,
    links: {
      self: path,
      pause: `${path}/pause`,
      resume: `${path}/resume`,
      cancel: `${path}/cancel`,
      retry: `${path}/retry`,
      download: `${path}/download`,
    },
  };
};
