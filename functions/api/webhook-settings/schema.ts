/** The contract of /webhook (GET, PUT, PATCH, POST, DELETE): the update body (the run-time `WebhookUpdateSchema`, described) and the setting it answers. */
import { z } from 'zod';
import { WebhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { endpointContract, json } from '#http/openapi/generator.ts';
import { documented } from '#http/schemas.ts';

documented(WebhookUpdateSchema.shape.webhook_url, {
  description:
    'Default webhook of the key, used for every new job without a `webhook_url` of its own: an http(s) ' +
    'URL, or empty to disable it. Private, loopback and link-local addresses are refused.',
});
export const WebhookUpdate = documented(WebhookUpdateSchema, {
  description: 'New webhook setting, as JSON or as a form.',
});

export const WebhookSetting = z
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
  requestSchemas: { WebhookUpdate },
  responseSchemas: { WebhookSetting },
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
