import { BadRequestError } from '../errors.ts';
import { generateApiKey, type KeyDefaults } from '../keys/api-key.ts';
import type { ApiKeyRepository, Clock } from '../ports.ts';

export interface CreatedApiKey {
  /** Shown once: only its hash is stored. */
  key: string;
  keyId: string;
  credits: number;
}

/**
 * Issue an API key.
 * 1. Generate a random secret and keep only its hash.
 * 2. Store the key with its defaults and an account funded with `credits`.
 */
export async function createApiKey(
  deps: { keys: ApiKeyRepository; clock: Clock },
  input: { credits: number; name?: string | null; defaults?: KeyDefaults },
): Promise<CreatedApiKey> {
  if (!Number.isInteger(input.credits) || input.credits < 0) {
    throw new BadRequestError('credits must be a whole number of at least 0');
  }
  const { secret, secretHash, keyId } = generateApiKey();
  await deps.keys.create(
    {
      keyId,
      secretHash,
      name: input.name ?? null,
      disabled: false,
      createdAt: deps.clock.now().toISOString(),
      defaults: input.defaults ?? {},
    },
    input.credits,
  );
  return { key: secret, keyId, credits: input.credits };
}
