/** The schema components of list-jobs's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { endpointDocument } from '#http/openapi/contract.ts';
import { cursor } from '#http/schemas/fields.ts';
import { Job } from '#http/schemas/job.ts';

const JobList = z
  .object({ jobs: z.array(Job), next_cursor: cursor })
  .describe('A page of the caller’s jobs, newest first.');

export const document = endpointDocument({
  responseSchemas: { JobList },
});
