import { BadRequestError } from '../errors.ts';
import { generateApiKey, type KeyDefaults } from '../keys/api-key.ts';
import type { ApiKeyRepository, Clock, WebhookSecretRepository } from '../ports.ts';
import { generateWebhookSecret } from '../webhooks/signature.ts';

export interface CreatedApiKey {
  /** Shown once: only its hash is stored. */
  key: string;
  keyId: string;
  credits: number;
  /** Signs the key's webhook deliveries (docs/webhooks.md); shown here and again only when rotated. */
  webhookSecret: string;
}

/**
 * Issue an API key.
 * 1. Generate a random secret and keep only its hash.
 * 2. Give the key its webhook signing secret. It is stored first: a key never exists without one, and a
 *    secret left over from a failed step 3 belongs to no key.
 * 3. Store the key with its defaults and an account funded with `credits`.
 */
export async function createApiKey(
  deps: { keys: ApiKeyRepository; webhookSecrets: WebhookSecretRepository; clock: Clock },
  input: { credits: number; name?: string | null; defaults?: KeyDefaults },
): Promise<CreatedApiKey> {
  if (!Number.isInteger(input.credits) || input.credits < 0) {
    throw new BadRequestError('credits must be a whole number of at least 0');
  }
  const { secret, secretHash, keyId } = generateApiKey();
  const now = deps.clock.now().toISOString();
  const webhookSecret = generateWebhookSecret();
  await deps.webhookSecrets.replace(keyId, [{ secret: webhookSecret, createdAt: now }], 0);
  await deps.keys.create(
    {
      keyId,
      secretHash,
      name: input.name ?? null,
      disabled: false,
      createdAt: now,
      defaults: input.defaults ?? {},
    },
    input.credits,
  );
  return { key: secret, keyId, credits: input.credits, webhookSecret };
}
