import {
  type DeliverWebhookInput,
  type DeliverWebhookOutcome,
  deliverJobWebhook,
} from '#core/use-cases/deliver-webhook.ts';
import { deliverDeps } from '#wiring/workflow.ts';

/** After settlement: the job's event and one webhook attempt; `final` marks the delivery failed. */
export const handler = async (event: DeliverWebhookInput): Promise<DeliverWebhookOutcome> =>
  deliverJobWebhook(deliverDeps(), event);
