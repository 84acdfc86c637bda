import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { BackgroundPreset } from '../jobs/job.ts';

const KEY_PREFIX = 'pjk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Defaults a key may store (spec 2.1, 5.3); a request's own parameters win over them. */
export interface KeyDefaults {
  background?: BackgroundPreset | null;
  backgroundFileKey?: string | null;
  plateColor?: string | null;
  plateSmoothing?: boolean | null;
  plateMaskOnly?: boolean | null;
  webhookUrl?: string | null;
}

export interface ApiKeyRecord {
  keyId: string;
  /** sha256 of the secret; the secret itself is never stored. */
  secretHash: string;
  name: string | null;
  disabled: boolean;
  createdAt: string;
  defaults: KeyDefaults;
}

export const hashSecret = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex');

/**
 * The key id is derived from the hash so that authentication is a single read by id; the id alone
 * reveals nothing usable because a 190-bit secret cannot be recovered from 64 bits of its hash.
 */
export const keyIdOf = (secretHash: string): string => `key_${secretHash.slice(0, 16)}`;

export function generateApiKey(): { secret: string; secretHash: string; keyId: string } {
  const bytes = randomBytes(32);
  let body = '';
  for (const byte of bytes) body += BASE62[byte % 62];
  const secret = `${KEY_PREFIX}${body}`;
  const secretHash = hashSecret(secret);
  return { secret, secretHash, keyId: keyIdOf(secretHash) };
}

export function secretMatches(secret: string, expectedHash: string): boolean {
  const actual = Buffer.from(hashSecret(secret), 'hex');
  const expected = Buffer.from(expectedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
