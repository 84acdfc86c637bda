/** The contract of POST /jobs/{job_id}/deliveries/redeliver: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
  operations: {
    'POST /jobs/{job_id}/deliveries/redeliver': {
      operationId: 'redeliverWebhook',
      summary: 'Send the final job JSON to the webhook again',
      description:
        'One attempt, now, as a new delivery (new `X-Service-Delivery`), signed and logged like the automatic ' +
        'ones; the body is what polling returns at this moment. 409 when the job is not finished or has no ' +
        'webhook URL.',
      tag: 'Webhooks',
      responses: {
        200: json(
          'WebhookDelivery',
          'The delivery and its attempt, whatever the receiver answered: see `status` and `attempts[0]`.',
        ),
      },
    },
  },
});
