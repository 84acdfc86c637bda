import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { BATCH_ACTIONS, batchResource } from '#core/batches/batch.ts';
import { NotFoundError } from '#core/errors.ts';
import { controlBatch } from '#core/use-cases/control-batch.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { batchDeps, deps } from '#wiring/api.ts';
import { contract, pathParameters } from './schema.ts';

/** POST /batches/{batch_id}/pause, /resume, /cancel, /retry; no body. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const action = pathParameters.action.safeParse(event.pathParameters?.action);
    if (!action.success) {
      throw new NotFoundError(
        `No batch action ${event.pathParameters?.action ?? ''}; use ${BATCH_ACTIONS.join(', ')}`,
      );
    }
    const batchId = event.pathParameters?.batch_id ?? '';
    const { batch, items } = await controlBatch(batchDeps(), context.caller, batchId, action.data);
    return json(200, { batch: batchResource(batch, items) });
  });
