/** The contract of POST /jobs/{job_id}/retry: its route entries in the OpenAPI document. */
import { SOURCE_TTL_DAYS } from '#core/jobs/expiry.ts';
import { endpointContract, json } from '#http/openapi/contract.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
  operations: {
    'POST /jobs/{job_id}/retry': {
      operationId: 'retryJob',
      summary: 'Retry a failed job',
      description:
        'Only a failed job can be retried; anything else is 409. A job whose photos have expired (kept ' +
        `${SOURCE_TTL_DAYS} days after \`created_at\`) cannot run again: 410, and nothing is reserved.`,
      tag: 'Jobs',
      responses: {
        202: json('JobEnvelope', 'The job is queued again, with a new credit reservation.'),
        200: json(
          'JobEnvelope',
          'The job is already running again because of an earlier retry; it is returned as it is, so the ' +
            'call can be repeated safely.',
        ),
      },
    },
  },
});
