/** The delivery log of a job's webhook (GET /jobs/{job_id}/deliveries and the redelivery). */
import * as z from 'zod';
import { WEBHOOK_EVENTS } from '#core/webhooks/delivery.ts';
import { timestamp } from './fields.ts';

export const DeliveryAttempt = z
  .object({
    attempt: z.int().min(1).describe('1, 2, ... within its delivery (`X-Service-Attempt`).'),
    at: timestamp.describe('When the attempt was sent.'),
    status_code: z
      .int()
      .nullable()
      .describe(
        'The receiver’s HTTP status; null when no answer came (timeout, refused address, connection error).',
      ),
    latency_ms: z.int().describe('From sending until the answer’s status arrived (or the attempt gave up).'),
    error: z
      .string()
      .nullable()
      .describe('Why the attempt failed (`HTTP 500`, a timeout, a redirect, ...); null when delivered.'),
    outcome: z.enum(['delivered', 'failed']).describe('Delivered means a 2xx answer.'),
  })
  .describe('One POST to the webhook: a line of the delivery log.');

export const WebhookDelivery = z
  .object({
    delivery_id: z
      .string()
      .describe('Sent as `X-Service-Delivery`; the same on every attempt of this delivery.'),
    event: z.enum(WEBHOOK_EVENTS).describe('Sent as `X-Service-Event`.'),
    trigger: z
      .enum(['workflow', 'redeliver'])
      .describe(
        '`workflow`: sent when the job finished, retried on the schedule; `redeliver`: asked for by the owner.',
      ),
    url: z.string().describe('Where it was sent.'),
    status: z
      .enum(['pending', 'delivered', 'failed'])
      .describe(
        '`pending` while retries remain; `failed` once the last attempt failed. The job is never affected.',
      ),
    created_at: timestamp,
    updated_at: timestamp,
    attempts: z.array(DeliveryAttempt),
  })
  .describe('The final job JSON on its way to the webhook, with every attempt made.');
