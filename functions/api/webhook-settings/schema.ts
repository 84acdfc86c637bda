/** The contract of /webhook (GET, PUT, PATCH, POST, DELETE): the update body (the run-time `webhookUpdateSchema`, described) and the setting it answers. */
import { type Examples, endpointContract, example, json } from '#http/openapi/contract.ts';

const WEBHOOK_BODY = {
  'application/json': 'WebhookUpdate',
  'application/x-www-form-urlencoded': 'WebhookUpdate',
  'multipart/form-data': 'WebhookUpdate',
} as const;

const HOOK = 'https://hooks.example.com/photo-jobs';
const setting = (message: string, url: string) => ({
  result: true,
  code: 200,
  message,
  webhook_url: url,
  webhook_enabled: Boolean(url),
});

/** An update route; PUT carries the examples (PATCH and POST take the same body). */
const webhookUpdate = (method: string, examples?: { request: Examples; response: Examples }) =>
  ({
    operationId: `${method}Webhook`,
    summary: 'Set the default webhook of the key',
    description: 'An empty `webhook_url` disables the webhook.',
    tag: 'Account',
    body: WEBHOOK_BODY,
    ...(examples ? { bodyExamples: { 'application/json': examples.request } } : {}),
    responses: { 200: json('WebhookSetting', 'The new setting.', { examples: examples?.response }) },
  }) as const;

export const contract = endpointContract({
  auth: 'key',
  operations: {
    'GET /webhook': {
      operationId: 'getWebhook',
      summary: 'Read the default webhook of the key',
      tag: 'Account',
      responses: {
        200: json('WebhookSetting', 'The current setting.', {
          examples: example('A default webhook', setting('Current webhook setting', HOOK)),
        }),
      },
    },
    'PUT /webhook': webhookUpdate('put', {
      request: example('Set the default webhook', { webhook_url: HOOK }),
      response: example('Saved', setting('Webhook saved', HOOK)),
    }),
    'PATCH /webhook': webhookUpdate('patch'),
    'POST /webhook': webhookUpdate('post'),
    'DELETE /webhook': {
      operationId: 'deleteWebhook',
      summary: 'Disable the default webhook of the key',
      tag: 'Account',
      responses: {
        200: json('WebhookSetting', 'The new setting.', {
          examples: example('Disabled', setting('Webhook disabled', '')),
        }),
      },
    },
  },
});
