/**
 * The webhooks the service sends (OpenAPI `webhooks`): a job's and a batch's, with the headers that carry
 * the delivery and its signature, named by the constants the sender uses.
 */

import { formatDuration } from '#core/units.ts';
import { BATCH_HEADER } from '#core/use-cases/notify-batch.ts';
import { WEBHOOK_EVENTS, HEADERS as WEBHOOK_HEADERS, WEBHOOK_TIMEOUT_MS } from '#core/webhooks/delivery.ts';
import { describeRetrySchedule } from '#core/webhooks/retry-schedule.ts';
import { SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECONDS } from '#core/webhooks/signature.ts';
import { componentRef, type Json } from './json-schema.ts';

/** What the service sends to a webhook receiver, by the operation id of each. */
export const WEBHOOKS: Json = {
  jobFinished: {
    post: {
      operationId: 'jobFinished',
      summary: 'A job finished',
      description:
        'Sent to the job’s `webhook_url`, or else the key’s default webhook, when the job finishes, with the ' +
        'final job: the same JSON as polling. A 2xx answer within ' +
        `${formatDuration(WEBHOOK_TIMEOUT_MS / 1000)} delivers it; anything else (another ` +
        `status, a redirect, a timeout) is retried ${describeRetrySchedule()} with exponential backoff ` +
        `and jitter. Verify \`${SIGNATURE_HEADER}\` before trusting the body: see docs/webhooks.md.`,
      parameters: [
        header(WEBHOOK_HEADERS.job, 'The job id.'),
        header(WEBHOOK_HEADERS.event, 'The event: `job.succeeded`, `job.failed` or `job.cancelled`.', [
          ...WEBHOOK_EVENTS,
        ]),
        header(
          WEBHOOK_HEADERS.delivery,
          'Id of this delivery; the same on each retry of it, so duplicates can be dropped.',
        ),
        header(WEBHOOK_HEADERS.attempt, 'Attempt number within the delivery, from 1.'),
        {
          ...header(
            SIGNATURE_HEADER,
            '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the key’s webhook secret>`; a ' +
              `second \`v1\` while a rotated secret overlaps. Refuse a \`t\` older than ${formatDuration(SIGNATURE_TOLERANCE_SECONDS)}. Absent for ` +
              'jobs of the master key and of guest sessions, which have no secret.',
          ),
          required: false,
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: componentRef('JobEnvelope') } },
      },
      responses: {
        '2XX': { description: 'Delivered.' },
        default: { description: 'Not delivered; retried on the schedule.' },
      },
    },
  },
  batchFinished: {
    post: {
      operationId: 'batchFinished',
      summary: 'A batch finished',
      description:
        'Sent to the key’s default webhook (as it was when the batch was created) when the batch completes, ' +
        'or when a cancelled batch’s last running photo has ended, with what GET /batches/{batch_id} ' +
        'answers then. Signed like the job webhook. One attempt only for now: no retry schedule and no ' +
        'delivery log yet (docs/decisions/0035-batch-download-and-webhook.md). Item jobs send no webhook of their own.',
      parameters: [
        header(BATCH_HEADER, 'The batch id.'),
        header(WEBHOOK_HEADERS.event, 'The event.', ['batch.completed', 'batch.cancelled']),
        header(WEBHOOK_HEADERS.delivery, 'Id of this delivery; the same for the same final state.'),
        header(WEBHOOK_HEADERS.attempt, 'Always 1.'),
        { ...header(SIGNATURE_HEADER, 'As for the job webhook.'), required: false },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: componentRef('BatchEnvelope') } },
      },
      responses: { '2XX': { description: 'Delivered.' }, default: { description: 'Not delivered.' } },
    },
  },
};

function header(name: string, description: string, values?: string[]): Json {
  return {
    name,
    in: 'header',
    required: true,
    description,
    schema: values ? { type: 'string', enum: values } : { type: 'string' },
  };
}
