/** The schema components of webhook-settings's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { webhookUpdateSchema } from '#core/use-cases/account-settings.ts';
import { endpointDocument } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/describe.ts';

const WebhookUpdate = documentedFields(
  webhookUpdateSchema(),
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

export const document = endpointDocument({
  requestSchemas: { WebhookUpdate },
  responseSchemas: { WebhookSetting },
});
