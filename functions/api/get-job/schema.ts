/** The contract of GET /jobs/{job_id}: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi/contract.ts';
import { JOB_EXAMPLES } from '#http/schemas/job-examples.ts';

export const contract = endpointContract({
  auth: 'key-or-guest',
  operations: {
    'GET /jobs/{job_id}': {
      operationId: 'getJob',
      summary: 'Read a job',
      description: 'The job envelope. Another owner’s job answers 404.',
      tag: 'Jobs',
      responses: {
        200: json('JobEnvelope', 'The job.', {
          examples: {
            plate_succeeded: { summary: 'A plate hidden', value: JOB_EXAMPLES.succeeded },
            analysis_succeeded: { summary: 'A photo analysed', value: JOB_EXAMPLES.analyzed },
            plate_failed: {
              summary: 'No plate in the photo (credits given back)',
              value: JOB_EXAMPLES.failed,
            },
          },
        }),
      },
    },
  },
});
