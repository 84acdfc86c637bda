/** The contract of GET /jobs: its route entries in the OpenAPI document. */
import { endpointContract, json } from '#http/openapi.ts';
import { listJobsQuery } from '#http/schemas.ts';

export const contract = endpointContract({
  operations: {
    'GET /jobs': {
      operationId: 'listJobs',
      summary: 'List the caller’s jobs',
      description: 'Only jobs of the calling key (or guest session), newest first.',
      tag: 'Jobs',
      auth: 'key-or-guest',
      query: listJobsQuery,
      responses: { 200: json('JobList', 'A page of jobs.') },
    },
  },
});
