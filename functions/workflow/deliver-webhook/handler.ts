import { deps } from '#aws/wiring.ts';
import {
  type DeliverWebhookInput,
  type DeliverWebhookOutcome,
  deliverJobWebhook,
} from '#core/use-cases/deliver-webhook.ts';

/** After settlement: the job's event and one webhook attempt; `final` marks the delivery failed. */
export const handler = async (event: DeliverWebhookInput): Promise<DeliverWebhookOutcome> =>
  deliverJobWebhook(deps(), event);
