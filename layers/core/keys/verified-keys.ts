import type { ApiKeyRecord } from './api-key.ts';

/**
 * How long a key verified against its stored record may authenticate reads without reading the record
 * again. It bounds how long a key that was just disabled can still read (never write: see below).
 */
export const VERIFIED_KEY_TTL_MS = 5_000;
/** Keys remembered at once; the oldest go first. A key spraying client cannot grow this: misses are not kept. */
const VERIFIED_KEY_CAPACITY = 10_000;

/**
 * Keys that passed verification in this process in the last few seconds, by the sha256 of the secret
 * presented, so that a hit is exactly the secret that was verified. Only enabled keys are kept; a
 * verification that fails forgets the key at once.
 */
export interface VerifiedKeys {
  recall(secretHash: string): ApiKeyRecord | undefined;
  remember(secretHash: string, record: ApiKeyRecord): void;
  forget(secretHash: string): void;
}

export function verifiedKeys(
  options: { ttlMs?: number; capacity?: number; now?: () => number } = {},
): VerifiedKeys {
  const ttlMs = options.ttlMs ?? VERIFIED_KEY_TTL_MS;
  const capacity = options.capacity ?? VERIFIED_KEY_CAPACITY;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { record: ApiKeyRecord; until: number }>();
  return {
    recall(secretHash) {
      const entry = entries.get(secretHash);
      if (!entry) return undefined;
      if (now() < entry.until) return entry.record;
      entries.delete(secretHash);
      return undefined;
    },
    remember(secretHash, record) {
      if (record.disabled) return;
      entries.delete(secretHash);
      entries.set(secretHash, { record, until: now() + ttlMs });
      if (entries.size > capacity) entries.delete(entries.keys().next().value!);
    },
    forget(secretHash) {
      entries.delete(secretHash);
    },
  };
}
