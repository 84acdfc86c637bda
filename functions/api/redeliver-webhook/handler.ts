import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { redeliverWebhook } from '#core/use-cases/deliver-webhook.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/** Send a finished job's final JSON to its webhook once more, now; answers with that delivery. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) =>
    json(200, await redeliverWebhook(deps(), context.caller, event.pathParameters?.job_id ?? '')),
  );
