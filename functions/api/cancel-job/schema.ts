/** The contract of POST /jobs/{job_id}/cancel: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi/generator.ts';

export const contract = endpointContract({
  operations: {
    'POST /jobs/{job_id}/cancel': {
      operationId: 'cancelJob',
      summary: 'Cancel a job',
      description: 'A job that already succeeded or failed cannot be cancelled (409).',
      tag: 'Jobs',
      auth: 'key-or-guest',
      responses: {
        200: json(
          'JobEnvelope',
          'Cancelled: a queued job at once, its reservation released; an already cancelled job as it is.',
        ),
        202: json(
          'JobEnvelope',
          'Cancellation requested for a processing job: `cancel_requested` is true and the job becomes ' +
            '`cancelled` at its next step, with nothing charged.',
        ),
      },
    },
  },
});
