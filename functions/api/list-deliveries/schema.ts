/** The contract of GET /jobs/{job_id}/deliveries: the delivery log it answers. */
import { endpointContract, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
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
