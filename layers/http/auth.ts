import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { UnauthorizedError } from '#core/errors.ts';
import { hashSecret, keyIdOf, secretMatches } from '#core/keys/api-key.ts';
import type { Caller } from '#core/keys/caller.ts';
import type { ApiKeyRepository } from '#core/ports.ts';

export interface Credentials {
  apiKey: string | null;
}

export function credentialsOf(event: APIGatewayProxyEventV2): Credentials {
  const headerKey = event.headers?.['x-api-key']?.trim();
  const bearer = event.headers?.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  return { apiKey: headerKey || bearer || null };
}

export type Authenticator = (credentials: Credentials) => Promise<Caller>;

/**
 * Resolve a caller from an API key: the master key (compared by hash), or a stored key that is
 * not disabled. Unknown and disabled keys get the same 401 so keys cannot be probed.
 */
export function keyAuthenticator(deps: {
  keys: ApiKeyRepository;
  masterKeySha256: string | null;
}): Authenticator {
  return async ({ apiKey }) => {
    if (!apiKey) throw new UnauthorizedError('Send an API key in X-API-Key or Authorization: Bearer');
    if (deps.masterKeySha256 && secretMatches(apiKey, deps.masterKeySha256)) return { kind: 'master' };
    const record = await deps.keys.findById(keyIdOf(hashSecret(apiKey)));
    if (!record || record.disabled || !secretMatches(apiKey, record.secretHash)) {
      throw new UnauthorizedError('The API key is not valid or has been disabled');
    }
    return { kind: 'key', keyId: record.keyId, account: record.keyId, defaults: record.defaults };
  };
}
