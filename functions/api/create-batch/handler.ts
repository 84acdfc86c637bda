import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { batchResource } from '#core/batches/batch.ts';
import { parseBatchRequest } from '#core/batches/input.ts';
import { createBatch } from '#core/use-cases/create-batch.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { batchDeps, deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/** POST /batches: multipart `archive` (ZIP) plus `mode`, `background`, `plate_color`. Not idempotent (spec 4). */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (_event, context) => {
    const request = parseBatchRequest(context.body.fields, context.body.files);
    const { batch, items } = await createBatch(batchDeps(), context.caller, request);
    const resource = batchResource(batch, items);
    return json(202, { batch: resource, status_url: resource.links.self }, { location: resource.links.self });
  });
