import middy from '@middy/core';
import { httpCorrelation, observability } from '#aws/observability.ts';
import { getWebhookSetting, setWebhook, webhookUrlField } from '#core/use-cases/account-settings.ts';
import { type HttpContext, type HttpEvent, httpStack } from '#http/http-stack.ts';
import { type HttpResult, json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { contract } from './schema.ts';

/** GET reads the key's default webhook; PUT, PATCH and POST set it (empty clears it); DELETE clears it. */
export const handler = middy<HttpEvent, HttpResult, Error, HttpContext>()
  .use(observability(httpCorrelation))
  .use(httpStack({ auth: contract.auth, deps }))
  .handler(async (event, context) => {
    const method = event.requestContext.http.method.toUpperCase();
    if (method === 'GET' || method === 'HEAD')
      return json(200, await getWebhookSetting(deps(), context.caller));
    const url = method === 'DELETE' ? '' : webhookUrlField(context.body.fields);
    return json(200, await setWebhook(deps(), context.caller, url));
  });
