/**
 * The contract of POST /jobs and the legacy POST /process and POST /analyze (one handler): the legacy
 * forms and answers, and the three route entries. The job input itself is shared with POST /assets
 * (layers/http/schemas.ts); the legacy forms are that input, as `parseJobRequest` reads it on each route.
 */
import * as z from 'zod';
import { jobPath } from '#core/jobs/envelope.ts';
import type { JobRoute } from '#core/jobs/job.ts';
import { LEGACY_PROCESS_OPERATION_NAMES, type Operation, PRICES } from '#core/jobs/operations.ts';
import { endpointContract, example, JOB_BODY, json, location } from '#http/openapi/contract.ts';
import { JobEnvelope, JobStatus } from '#http/schemas/job.ts';
import { JOB_EXAMPLES } from '#http/schemas/job-examples.ts';
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

const JOB_LOCATION = { headers: location('Path of the job.') };
const REPLAY =
  'Replay: this `Idempotency-Key` was used before with an identical body and that job has finished; ' +
  'the job envelope is returned again.';

export const contract = endpointContract({
  auth: 'key-or-guest',
  opensGuestSession: true,
  requestSchemas: { LegacyProcessForm, LegacyAnalyzeForm },
  responseSchemas: { JobCreated, LegacyProcessCreated, LegacyAnalyzeCreated },
  operations: {
    'POST /jobs': {
      operationId: 'createJob',
      summary: 'Create a processing or analysis job',
      description:
        'The job runs asynchronously: poll `status_url`/`links.self` or wait for the webhook. Credits are ' +
        'reserved now and charged on success.',
      tag: 'Jobs',
      idempotent: true,
      body: JOB_BODY,
      bodyExamples: {
        'application/json': {
          plate_from_url: {
            summary: 'Hide the plate of a photo on the web, with a one-off webhook',
            value: {
              mode: 'plate',
              url: 'https://images.example.com/cars/estate-front.jpg',
              plate_color: '#141414',
              webhook_url: 'https://hooks.example.com/photo-jobs',
            },
          },
          studio_from_asset: {
            summary: 'Studio background for an uploaded asset',
            value: {
              mode: 'studio_background',
              asset_id: 'ast_3v5b7n9m1q3w5e7r9t1y3u5i',
              background: 'showroom',
            },
          },
        },
      },
      responses: {
        202: json(
          'JobCreated',
          'Accepted: the job is queued. A repeated `Idempotency-Key` for a job still running returns that job, also with 202.',
          {
            ...JOB_LOCATION,
            examples: example('A plate job, queued', {
              ...JOB_EXAMPLES.queued,
              status_url: jobPath(JOB_EXAMPLES.queued.job_id),
            }),
          },
        ),
        200: json('JobEnvelope', REPLAY, {
          ...JOB_LOCATION,
          examples: example(
            'Replay of a finished job (same Idempotency-Key and body)',
            JOB_EXAMPLES.succeeded,
          ),
        }),
      },
    },
    'POST /process': {
      operationId: 'legacyProcess',
      summary: 'Legacy: queue a processing job',
      tag: 'Legacy',
      idempotent: true,
      body: { 'multipart/form-data': 'LegacyProcessForm' },
      responses: {
        202: json('LegacyProcessCreated', 'Accepted: the job is queued.', JOB_LOCATION),
        200: json('JobEnvelope', REPLAY, JOB_LOCATION),
      },
    },
    'POST /analyze': {
      operationId: 'legacyAnalyze',
      summary: 'Legacy: queue an analysis job',
      description: 'The analysis arrives with the finished job (polling or webhook).',
      tag: 'Legacy',
      idempotent: true,
      body: { 'multipart/form-data': 'LegacyAnalyzeForm' },
      responses: {
        202: json('LegacyAnalyzeCreated', 'Accepted: the job is queued.', JOB_LOCATION),
        200: json('JobEnvelope', REPLAY, JOB_LOCATION),
      },
    },
  },
});

/**
 * One handler serves POST /jobs and the legacy /process and /analyze, which differ in modes and answers:
 * each route's name and modes, by the contract's routes, so a route added there without a line here does
 * not compile.
 */
export const JOB_ROUTES: Record<
  keyof typeof contract.operations,
  { route: JobRoute; modes?: readonly Operation[] }
> = {
  'POST /jobs': { route: 'jobs' },
  'POST /process': { route: 'process', modes: LEGACY_PROCESS_OPERATION_NAMES },
  'POST /analyze': { route: 'analyze', modes: ['analyze'] },
};
