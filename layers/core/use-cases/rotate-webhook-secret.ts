import { NotFoundError, TransientError } from '../errors.ts';
import type { ApiKeyRepository, Clock, WebhookSecretRepository } from '../ports.ts';
import { generateWebhookSecret, ROTATION_OVERLAP_SECONDS, rotateSecrets } from '../webhooks/signature.ts';

const MAX_WRITE_ATTEMPTS = 5;

/**
 * Replace an API key's webhook signing secret.
 * 1. A new secret signs from now on; the previous one keeps signing beside it (a second `v1`) for the
 *    overlap window, so receivers can switch without missing a delivery.
 * 2. The new secret is returned once; only the store keeps it afterwards.
 */
export async function rotateWebhookSecret(
  deps: { keys: ApiKeyRepository; webhookSecrets: WebhookSecretRepository; clock: Clock },
  keyId: string,
  overlapSeconds: number = ROTATION_OVERLAP_SECONDS,
): Promise<{ keyId: string; webhookSecret: string; previousExpiresAt: string | null }> {
  if (!(await deps.keys.findById(keyId))) throw new NotFoundError(`API key ${keyId} does not exist`);
  for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
    const { secrets, version } = await deps.webhookSecrets.get(keyId);
    const fresh = generateWebhookSecret();
    const rotated = rotateSecrets(secrets, fresh, deps.clock.now(), overlapSeconds);
    if (await deps.webhookSecrets.replace(keyId, rotated, version)) {
      return { keyId, webhookSecret: fresh, previousExpiresAt: rotated[1]?.expiresAt ?? null };
    }
  }
  throw new TransientError(`The webhook secrets of ${keyId} kept changing; try again`);
}
