/** The contract of GET /webhook, PUT /webhook, PATCH /webhook, POST /webhook, DELETE /webhook: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';

const WEBHOOK_BODY = {
  'application/json': 'WebhookUpdate',
  'application/x-www-form-urlencoded': 'WebhookUpdate',
  'multipart/form-data': 'WebhookUpdate',
} as const;

const webhookUpdate = (method: string) =>
  ({
    operationId: `${method}Webhook`,
    summary: 'Set the default webhook of the key',
    description: 'An empty `webhook_url` disables the webhook.',
    tag: 'Account',
    auth: 'key',
    body: WEBHOOK_BODY,
    responses: { 200: json('WebhookSetting', 'The new setting.') },
  }) as const;

export const contract = endpointContract({
  operations: {
    'GET /webhook': {
      operationId: 'getWebhook',
      summary: 'Read the default webhook of the key',
      tag: 'Account',
      auth: 'key',
      responses: { 200: json('WebhookSetting', 'The current setting.') },
    },
    'PUT /webhook': webhookUpdate('put'),
    'PATCH /webhook': webhookUpdate('patch'),
    'POST /webhook': webhookUpdate('post'),
    'DELETE /webhook': {
      operationId: 'deleteWebhook',
      summary: 'Disable the default webhook of the key',
      tag: 'Account',
      auth: 'key',
      responses: { 200: json('WebhookSetting', 'The new setting.') },
    },
  },
});
