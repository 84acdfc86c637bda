import { batchResource } from '#core/batches/batch.ts';
import { readBatch } from '#core/use-cases/control-batch.ts';
import { json } from '#http/responses.ts';
import { batchDeps } from '#wiring/api-batch.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

export const handler = apiHandler(contract, async ({ caller, path }) => {
  const { batch, items } = await readBatch(batchDeps(), caller, path.batch_id);
  return json(200, { batch: batchResource(batch, items) });
});
