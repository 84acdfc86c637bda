import { batchResource } from '#core/batches/batch.ts';
import { controlBatch } from '#core/use-cases/control-batch.ts';
import { json } from '#http/responses.ts';
import { batchDeps } from '#wiring/api-batch.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** POST /batches/{batch_id}/pause, /resume, /cancel, /retry; no body. */
export const handler = apiHandler(contract, async ({ caller, path }) => {
  const { batch, items } = await controlBatch(batchDeps(), caller, path.batch_id, path.action);
  return json(200, { batch: batchResource(batch, items) });
});
