/**
 * The contract of POST /jobs and the legacy POST /process and POST /analyze (one handler): the three route
 * entries (the legacy forms and answers are ./document.ts). The job input itself is shared with POST
 * /assets (layers/http/schemas/); the legacy forms are that input, as `parseJobRequest` reads it on each route.
 */
import { jobPath } from '#core/jobs/envelope.ts';
import type { JobRoute } from '#core/jobs/job.ts';
import { LEGACY_PROCESS_OPERATION_NAMES, type Operation } from '#core/jobs/operations.ts';
import { endpointContract, example, JOB_BODY, json, location } from '#http/openapi/contract.ts';
import { JOB_EXAMPLES } from '#http/schemas/job-examples.ts';

const JOB_LOCATION = { headers: location('Path of the job.') };
const REPLAY =
  'Replay: this `Idempotency-Key` was used before with an identical body and that job has finished; ' +
  'the job envelope is returned again.';

export const contract = endpointContract({
  auth: 'key-or-guest',
  opensGuestSession: true,
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
