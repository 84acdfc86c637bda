import { batchResource } from '#core/batches/batch.ts';
import { parseBatchRequest } from '#core/batches/input.ts';
import { createBatch } from '#core/use-cases/create-batch.ts';
import { json } from '#http/responses.ts';
import { batchDeps } from '#wiring/api-batch.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** POST /batches: multipart `archive` (ZIP) plus `mode`, `background`, `plate_color`. Not idempotent (spec 4). */
export const handler = apiHandler(contract, async ({ caller, body }) => {
  const request = parseBatchRequest(body.fields, body.files);
  const { batch, items } = await createBatch(batchDeps(), caller, request);
  const resource = batchResource(batch, items);
  return json(202, { batch: resource, status_url: resource.links.self }, { location: resource.links.self });
});
