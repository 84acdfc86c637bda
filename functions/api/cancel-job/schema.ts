/** The contract of POST /jobs/{job_id}/cancel: its route entries in the OpenAPI document. */
import { endpointContract, example, json } from '#http/openapi/contract.ts';
import { JOB_EXAMPLES } from '#http/schemas/job-examples.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
  operations: {
    'POST /jobs/{job_id}/cancel': {
      operationId: 'cancelJob',
      summary: 'Cancel a job',
      description: 'A job that already succeeded or failed cannot be cancelled (409).',
      tag: 'Jobs',
      responses: {
        200: json(
          'JobEnvelope',
          'Cancelled: a queued job at once, its reservation released; an already cancelled job as it is.',
          {
            examples: example('A queued job, cancelled', {
              ...JOB_EXAMPLES.queued,
              result: false,
              status: 'cancelled',
              code: 409,
              message: 'Job was cancelled',
              quota: { remaining: 100, credits_remaining: 100 },
              stage: 'done',
              finished_at: '2026-11-24T09:30:00.310Z',
            }),
          },
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
