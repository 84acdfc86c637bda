/** The contract of GET /jobs: its query (the run-time `ListJobsQuery`, described) and its page of jobs. */
import { z } from 'zod';
import { ListJobsQuery } from '#core/use-cases/list-jobs.ts';
import { endpointContract, json } from '#http/openapi/generator.ts';
import { cursor, documented, Job } from '#http/schemas.ts';

/** Query parameters of GET /jobs: the schema the use case parses with, described. */
documented(ListJobsQuery.shape.limit, { description: 'Page size.' });
documented(ListJobsQuery.shape.before, {
  format: 'int64',
  description: 'Cursor: `next_cursor` of the previous page.',
});
documented(ListJobsQuery.shape.status, { description: 'Only jobs with this status.' });
export const listJobsQuery = ListJobsQuery;

export const JobList = z
  .object({ jobs: z.array(Job), next_cursor: cursor })
  .describe('A page of the caller’s jobs, newest first.');

export const contract = endpointContract({
  responseSchemas: { JobList },
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
