/** The contract of GET /jobs/{job_id}: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi/generator.ts';

export const contract = endpointContract({
  operations: {
    'GET /jobs/{job_id}': {
      operationId: 'getJob',
      summary: 'Read a job',
      description: 'The job envelope. Another owner’s job answers 404.',
      tag: 'Jobs',
      auth: 'key-or-guest',
      responses: { 200: json('JobEnvelope', 'The job.') },
    },
  },
});
