/** The contract of GET /jobs: its query (the run-time `listJobsQuery`, described) and its page of jobs. */
import { listJobsQuery } from '#core/use-cases/list-jobs.ts';
import { endpointContract, example, json } from '#http/openapi/contract.ts';
import { documentedFields } from '#http/schemas/describe.ts';
import { JOB_EXAMPLES } from '#http/schemas/job-examples.ts';

export const contract = endpointContract({
  /** Query parameters of GET /jobs: the schema its handler gets the query parsed with, described. */
  query: () =>
    documentedFields(listJobsQuery(), {
      limit: { description: 'Page size.' },
      before: { format: 'int64', description: 'Cursor: `next_cursor` of the previous page.' },
      status: { description: 'Only jobs with this status.' },
    }),
  auth: 'key-or-guest',
  operations: {
    'GET /jobs': {
      operationId: 'listJobs',
      summary: 'List the caller’s jobs',
      description: 'Only jobs of the calling key (or guest session), newest first.',
      tag: 'Jobs',
      responses: {
        200: json('JobList', 'A page of jobs.', {
          examples: example('The newest job and the cursor of the next page', {
            jobs: [JOB_EXAMPLES.resource],
            next_cursor: 1764063000000001,
          }),
        }),
      },
    },
  },
});
