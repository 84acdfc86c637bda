import middy from '@middy/core';
import { observability } from '#aws/observability.ts';
import {
  type DeliverWebhookInput,
  type DeliverWebhookOutcome,
  deliverJobWebhook,
} from '#core/use-cases/deliver-webhook.ts';
import { deliverDeps } from '#wiring/workflow.ts';

/** After settlement: the job's event and one webhook attempt; `final` marks the delivery failed. */
export const handler = middy<DeliverWebhookInput, DeliverWebhookOutcome>()
  .use(observability((event: DeliverWebhookInput) => ({ jobId: event.jobId })))
  .handler(async (event) => deliverJobWebhook(deliverDeps(), event));
