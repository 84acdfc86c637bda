import { getWebhookSetting, setWebhook, webhookUrlField } from '#core/use-cases/account-settings.ts';
import { json } from '#http/responses.ts';
import { deps } from '#wiring/api.ts';
import { apiHandler } from '../api-handler.ts';
import { contract } from './schema.ts';

/** GET reads the key's default webhook; PUT, PATCH and POST set it (empty clears it); DELETE clears it. */
export const handler = apiHandler(contract, async ({ event, caller, body }) => {
  const method = event.requestContext.http.method.toUpperCase();
  if (method === 'GET' || method === 'HEAD') return json(200, await getWebhookSetting(deps(), caller));
  const url = method === 'DELETE' ? '' : webhookUrlField(body.fields);
  return json(200, await setWebhook(deps(), caller, url));
});
