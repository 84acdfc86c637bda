/** The schema components of create-job's routes, for the OpenAPI document only (see ./schema.ts). */
import * as z from 'zod';
import { LEGACY_PROCESS_OPERATION_NAMES, PRICES } from '#core/jobs/operations.ts';
import { endpointDocument } from '#http/openapi/contract.ts';
import { JobEnvelope, JobStatus } from '#http/schemas/job.ts';
import { JobInputForm } from '#http/schemas/job-input.ts';

/**
 * `/process` checks its modes in `parseJobRequest` (the handler passes `LEGACY_PROCESS_OPERATION_NAMES`), so its
 * `mode` is the one field documented by a schema of its own, built from that constant.
 */
const LegacyProcessForm = JobInputForm.extend({
  mode: z
    .enum(LEGACY_PROCESS_OPERATION_NAMES)
    .default('plate')
    .describe('`plate` hides the plate; `studio_background` replaces the background.'),
}).describe(
  'Legacy `/process` form: the fields of 2.1, with `mode` limited to `plate` and `studio_background`. ' +
    'The source is `file` or `url` as in the spec, or `asset_id` or `upload_id`: exactly one.',
);

/** The handler sets `mode` to `analyze` over whatever is sent, and parses the rest as POST /jobs does. */
const LegacyAnalyzeForm = JobInputForm.omit({ mode: true }).describe(
  'Legacy `/analyze` form: the fields of 2.1 but `mode`, which is always `analyze` (a `mode` sent is ' +
    'ignored). The source is `file` or `url` as in the spec, or `asset_id` or `upload_id`: exactly one. ' +
    'The edit parameters are checked as for POST /jobs (an invalid one is a 400) and change nothing in ' +
    'an analysis.',
);

const statusUrl = z.string().describe('Path of the job, `/api/v1/jobs/{job_id}`; poll it with GET.');

const JobCreated = JobEnvelope.extend({ status_url: statusUrl }).describe(
  'The job envelope of a job just accepted, with `status_url` (spec: creation returns `job_id` and `status_url`).',
);

const LegacyProcessCreated = z
  .object({
    result: z.boolean(),
    queued: z.boolean(),
    code: z.int().describe('202'),
    message: z.string(),
    cost_credits: z.number(),
    job_id: z.string(),
    status: JobStatus.describe('`queued`'),
    status_url: statusUrl,
    webhook_enabled: z
      .boolean()
      .describe('A webhook (the job’s own or the key’s default) will receive the final job.'),
    quota: z
      .object({
        remaining: z.number().nullable().describe('Credits available; null for the master key.'),
        credits_remaining: z.number().nullable().describe('Same as `remaining` (legacy name).'),
        process_credit_cost: z.number().describe(String(PRICES.edit)),
        classification_credit_cost: z.number().describe(String(PRICES.analysis)),
      })
      .describe('Balance and prices.'),
  })
  .describe('Legacy creation response of `/process` (spec 2.3).');

const LegacyAnalyzeCreated = LegacyProcessCreated.pick({
  result: true,
  queued: true,
  code: true,
  cost_credits: true,
  job_id: true,
  status: true,
  status_url: true,
}).describe('Legacy creation response of `/analyze` (spec 2.3); the analysis arrives with the finished job.');

export const document = endpointDocument({
  requestSchemas: { LegacyProcessForm, LegacyAnalyzeForm },
  responseSchemas: { JobCreated, LegacyProcessCreated, LegacyAnalyzeCreated },
});
