import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { getQuota } from '#core/use-cases/account-settings.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (_event, context) => json(200, await getQuota(deps(), context.caller)));
