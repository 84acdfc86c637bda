/**
 * The schemas several endpoints share: the job input (POST /jobs, /assets and the legacy forms), the job
 * and batch resources, the webhook delivery, the error body, the path parameters of more than one route, one file each in this folder.
 * What one endpoint alone uses is in its `functions/api/<endpoint>/schema.ts`. Requests and parameters
 * are the run-time schemas themselves (layers/core), described here; responses are defined here, and the
 * integration tests check every real response against them.
 * A schema becomes `#/components/schemas/<key>` by being an entry of `sharedRequestSchemas` or
 * `sharedResponseSchemas` here (or of an endpoint's contract); anything it nests that is itself a
 * component of the same kind is a `$ref`.
 */
import * as z from 'zod';
import { JOB_ID_PATTERN } from '#core/jobs/ids.ts';
import {
  API_GATEWAY_PAYLOAD_BYTES,
  INTEGRATION_TIMEOUT_SECONDS,
  LAMBDA_INVOKE_PAYLOAD_BYTES,
} from '#core/limits/request.ts';
import { formatBytes, formatDuration } from '#core/units.ts';
import { Batch, BatchEnvelope, BatchItem } from './batch.ts';
import {
  Analysis,
  AnalysisLabel,
  Job,
  JobEnvelope,
  JobError,
  JobLinks,
  JobOutput,
  JobStage,
  JobStatus,
  Operation,
  QuotaSnapshot,
} from './job.ts';
import { JobInput, JobInputForm } from './job-input.ts';
import { DeliveryAttempt, WebhookDelivery } from './webhook-delivery.ts';

/** Request bodies several endpoints take, by component name. */
export const sharedRequestSchemas = { JobInput, JobInputForm };

const ErrorBody = z
  .object({
    code: z.int().describe('The HTTP status, or for 422 the reason: 800, 802 or 803.'),
    message: z.string(),
    result: z.literal(false),
  })
  .describe('Every error answers with this body (spec 2.10).');

const ApiGatewayError = z
  .object({ message: z.string() })
  .describe(
    'What API Gateway answers itself, before or instead of the service, in its own shape: 413 ' +
      `\`Request Entity Too Large\` (a body over ${formatBytes(API_GATEWAY_PAYLOAD_BYTES)}, or an event over ` +
      `Lambda’s ${formatBytes(LAMBDA_INVOKE_PAYLOAD_BYTES)}), 500 \`Internal Server Error\` (the function failed), ` +
      `503 \`Service Unavailable\` (no answer within ${formatDuration(INTEGRATION_TIMEOUT_SECONDS)}).`,
  );

/** Response bodies several endpoints answer (or nest), by component name. */
export const sharedResponseSchemas = {
  JobStatus,
  Operation,
  JobStage,
  Analysis,
  AnalysisLabel,
  JobOutput,
  JobError,
  JobLinks,
  QuotaSnapshot,
  Job,
  JobEnvelope,
  Batch,
  BatchItem,
  BatchEnvelope,
  DeliveryAttempt,
  WebhookDelivery,
  ErrorBody,
  ApiGatewayError,
};

// ---------------------------------------------------------------- parameters

/** Path parameters of more than one route, by name; the others are in their endpoint's schema.ts. */
export const sharedPathParameters = {
  job_id: z
    .string()
    .regex(JOB_ID_PATTERN)
    .describe('Job id.')
    .meta({ examples: ['job_0123456789abcdefghjkmnpq'] }),
  batch_id: z
    .string()
    .describe('Batch id.')
    .meta({ examples: ['bat_0123456789abcdefghjkmnpq'] }),
} satisfies Record<string, z.ZodType>;
