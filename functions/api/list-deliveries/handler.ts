import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { listJobDeliveries } from '#core/use-cases/deliver-webhook.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/** The webhook delivery log of one of the caller's jobs. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) =>
    json(200, await listJobDeliveries(deps(), context.caller, event.pathParameters?.job_id ?? '')),
  );
