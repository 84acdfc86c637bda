import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { batchResource } from '#core/batches/batch.ts';
import { readBatch } from '#core/use-cases/control-batch.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { batchDeps, deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const { batch, items } = await readBatch(
      batchDeps(),
      context.caller,
      event.pathParameters?.batch_id ?? '',
    );
    return json(200, { batch: batchResource(batch, items) });
  });
