/** The contract of /webhook (GET, PUT, PATCH, POST, DELETE): the update body (the run-time `WebhookUpdateSchema`, described) and the setting it answers. */
import * as z from 'zod';
import { WebhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { type Examples, endpointContract, example, json } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/fields.ts';

const WebhookUpdate = documentedFields(
  WebhookUpdateSchema,
  {
    webhook_url: {
      description:
        'Default webhook of the key, used for every new job without a `webhook_url` of its own: an http(s) ' +
        'URL, or empty to disable it. Private, loopback and link-local addresses are refused.',
    },
  },
  { description: 'New webhook setting, as JSON or as a form.' },
);

const WebhookSetting = z
  .object({
    result: z.boolean(),
    code: z.int(),
    message: z.string(),
    webhook_url: z.string().describe('The stored URL; empty when disabled.'),
    webhook_enabled: z.boolean(),
  })
  .describe('The key’s default webhook (spec 2.8). The master key does not store one.');

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
  requestSchemas: { WebhookUpdate },
  responseSchemas: { WebhookSetting },
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
