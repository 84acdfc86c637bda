/** The schema components of list-deliveries's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';
import { WebhookDelivery } from '#http/schemas/webhook-delivery.ts';

const DeliveryLog = z
  .object({
    job_id: z.string(),
    webhook_url: z
      .string()
      .nullable()
      .describe('The job’s webhook: its own `webhook_url` or the key’s default.'),
    deliveries: z.array(WebhookDelivery).describe('Newest first.'),
  })
  .describe('The webhook delivery log of a job.');

export const document = endpointDocument({
  responseSchemas: { DeliveryLog },
});
