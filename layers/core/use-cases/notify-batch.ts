import { createHash } from 'node:crypto';
import { type Batch, batchResource } from '../batches/batch.ts';
import type { BatchRepository, Clock, WebhookSecretRepository, WebhookSender } from '../ports.ts';
import { HEADERS, signingKeyIdOf, USER_AGENT } from '../webhooks/delivery.ts';
import { SIGNATURE_HEADER, signatureHeader, signingSecrets } from '../webhooks/signature.ts';

export interface NotifyBatchDeps {
  batches: BatchRepository;
  webhookSecrets: WebhookSecretRepository;
  webhooks: WebhookSender;
  clock: Clock;
}

export const BATCH_HEADER = 'X-Service-Batch';
type BatchEventName = 'batch.completed' | 'batch.cancelled';

/**
 * Tell the batch's webhook that it finished (`batch.completed`, or `batch.cancelled` once its last
 * running item has ended), signed exactly like a job's webhook (docs/webhooks.md).
 * 1. Without a webhook URL there is nothing to do.
 * 2. The body is what GET /batches/{batch_id} answers now; `X-Service-Batch` names the batch and
 *    `X-Service-Delivery` is stable for this final state, so a receiver can drop a repeat.
 * 3. One attempt: the sender reports a failing receiver as an outcome, and that outcome is returned.
 *    Retries on a schedule and a delivery log, as jobs have, are not wired for batches yet.
 */
export async function notifyBatchFinished(deps: NotifyBatchDeps, batch: Batch) {
  if (!batch.webhookUrl || (batch.status !== 'completed' && batch.status !== 'cancelled')) return null;
  const event: BatchEventName = batch.status === 'completed' ? 'batch.completed' : 'batch.cancelled';
  const items = await deps.batches.items(batch.id);
  const body = JSON.stringify({ batch: batchResource(batch, items) });
  const deliveryId = `dlv_${createHash('sha256').update(`${batch.id}\n${batch.revision}`).digest('hex').slice(0, 32)}`;
  const now = deps.clock.now();
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [BATCH_HEADER]: batch.id,
    [HEADERS.event]: event,
    [HEADERS.delivery]: deliveryId,
    [HEADERS.attempt]: '1',
  };
  const keyId = signingKeyIdOf(batch.ownerId);
  const secrets = keyId ? signingSecrets((await deps.webhookSecrets.get(keyId)).secrets, now) : [];
  if (secrets.length > 0) {
    headers[SIGNATURE_HEADER] = signatureHeader(secrets, Math.floor(now.getTime() / 1000), body);
  }
  return { event, deliveryId, ...(await deps.webhooks.post(batch.webhookUrl, headers, body)) };
}
