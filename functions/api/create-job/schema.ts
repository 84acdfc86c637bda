/** The contract of POST /jobs, POST /process, POST /analyze: its route entries in the OpenAPI document. */
import { endpointContract, JOB_BODY, json, location } from '#http/openapi.ts';

const JOB_LOCATION = { headers: location('Path of the job.') };
const REPLAY =
  'Replay: this `Idempotency-Key` was used before with an identical body and that job has finished; ' +
  'the job envelope is returned again.';

export const contract = endpointContract({
  operations: {
    'POST /jobs': {
      operationId: 'createJob',
      summary: 'Create a processing or analysis job',
      description:
        'The job runs asynchronously: poll `status_url`/`links.self` or wait for the webhook. Credits are ' +
        'reserved now and charged on success.',
      tag: 'Jobs',
      auth: 'key-or-guest',
      idempotent: true,
      body: JOB_BODY,
      responses: {
        202: json(
          'JobEnvelope',
          'Accepted: the job is queued. A repeated `Idempotency-Key` for a job still running returns that job, also with 202.',
          JOB_LOCATION,
        ),
        200: json('JobEnvelope', REPLAY, JOB_LOCATION),
      },
    },
    'POST /process': {
      operationId: 'legacyProcess',
      summary: 'Legacy: queue a processing job',
      tag: 'Legacy',
      auth: 'key-or-guest',
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
      auth: 'key-or-guest',
      idempotent: true,
      body: { 'multipart/form-data': 'LegacyAnalyzeForm' },
      responses: {
        202: json('LegacyAnalyzeCreated', 'Accepted: the job is queued.', JOB_LOCATION),
        200: json('JobEnvelope', REPLAY, JOB_LOCATION),
      },
    },
  },
});
