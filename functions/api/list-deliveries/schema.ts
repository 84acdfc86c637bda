/** The contract of GET /jobs/{job_id}/deliveries: the delivery log it answers. */
import * as z from 'zod';
import { endpointContract, json } from '#http/openapi/contract.ts';
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

export const contract = endpointContract({
  auth: 'key-or-guest',
  responseSchemas: { DeliveryLog },
  operations: {
    'GET /jobs/{job_id}/deliveries': {
      operationId: 'listDeliveries',
      summary: 'Read the webhook delivery log of a job',
      description:
        'Every delivery of the job’s final JSON to its webhook, with each attempt’s time, HTTP status and ' +
        'latency. Only the job’s owner sees it; anyone else gets 404.',
      tag: 'Webhooks',
      responses: { 200: json('DeliveryLog', 'The delivery log, newest delivery first.') },
    },
  },
});
