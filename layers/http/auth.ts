import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { TooManyRequestsError, UnauthorizedError } from '#core/errors.ts';
import { hashSecret, keyIdOf, secretMatches } from '#core/keys/api-key.ts';
import type { Caller } from '#core/keys/caller.ts';
import {
  GUEST_COOKIE,
  GUEST_SESSION_SECONDS,
  guestAccountOf,
  newGuestSessionId,
  signGuestSession,
  verifyGuestSession,
} from '#core/keys/guest-session.ts';
import type { AccountRepository, ApiKeyRepository, GuestRepository } from '#core/ports.ts';

export interface AuthPolicy {
  /** Spec 5.2: a key in the query string (`api_key`) is off unless the operator enables it. */
  allowKeyInQuery: boolean;
  /** The older form field `api_key`, likewise off by default. */
  allowKeyInForm: boolean;
  guestTrialCredits: number;
  guestSessionsPerAddressPerDay: number;
}

export interface AuthDeps {
  keys: ApiKeyRepository;
  accounts: AccountRepository;
  guests: GuestRepository;
  masterKeySha256: string | null;
  policy: AuthPolicy;
}

export interface Authenticated {
  caller: Caller;
  /** Set-Cookie value when a new guest session was opened. */
  cookie?: string;
}

function cookieOf(event: APIGatewayProxyEventV2, name: string): string | undefined {
  for (const cookie of event.cookies ?? []) {
    const [key, ...value] = cookie.split('=');
    if (key?.trim() === name) return value.join('=').trim();
  }
  return undefined;
}

/** The presented API key, from the places this server accepts; a key sent where it is not accepted is a 401. */
export function presentedKey(
  event: APIGatewayProxyEventV2,
  formFields: Record<string, unknown>,
  policy: AuthPolicy,
): string | null {
  const headerKey = event.headers?.['x-api-key']?.trim();
  const bearer = event.headers?.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (headerKey || bearer) return (headerKey || bearer)!;
  const queryKey = event.queryStringParameters?.api_key;
  if (queryKey) {
    if (!policy.allowKeyInQuery) {
      throw new UnauthorizedError('API keys in the query string are disabled on this server; send X-API-Key');
    }
    return queryKey;
  }
  const formKey = formFields.api_key;
  if (typeof formKey === 'string' && formKey) {
    if (!policy.allowKeyInForm) {
      throw new UnauthorizedError('The api_key form field is disabled on this server; send X-API-Key');
    }
    return formKey;
  }
  return null;
}

export async function callerForKey(deps: AuthDeps, apiKey: string): Promise<Caller> {
  if (deps.masterKeySha256 && secretMatches(apiKey, deps.masterKeySha256)) return { kind: 'master' };
  const record = await deps.keys.findById(keyIdOf(hashSecret(apiKey)));
  // Unknown and disabled keys get the same answer, so keys cannot be probed.
  if (!record || record.disabled || !secretMatches(apiKey, record.secretHash)) {
    throw new UnauthorizedError('The API key is not valid or has been disabled');
  }
  return { kind: 'key', keyId: record.keyId, account: record.keyId, defaults: record.defaults };
}

/**
 * A request without a key runs against the guest trial balance of its session (spec 5.4). The session
 * is a signed cookie; a new one is opened with the trial credits, at most a few per address a day, so
 * that dropping the cookie is not a way to mint credits.
 */
export async function guestCaller(deps: AuthDeps, event: APIGatewayProxyEventV2): Promise<Authenticated> {
  const secret = await deps.guests.signingSecret();
  const existing = verifyGuestSession(cookieOf(event, GUEST_COOKIE), secret);
  if (existing) return { caller: { kind: 'guest', sessionId: existing, account: guestAccountOf(existing) } };

  const address = event.requestContext?.http?.sourceIp ?? 'unknown';
  const day = new Date().toISOString().slice(0, 10);
  if (!(await deps.guests.admitNewSession(address, day, deps.policy.guestSessionsPerAddressPerDay))) {
    throw new TooManyRequestsError('Too many trial sessions from this address today; use an API key');
  }
  const sessionId = newGuestSessionId();
  await deps.accounts.open(guestAccountOf(sessionId), deps.policy.guestTrialCredits);
  const secure = event.headers?.['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  const cookie = `${GUEST_COOKIE}=${signGuestSession(sessionId, secret)}; Path=/api/v1; Max-Age=${GUEST_SESSION_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
  return { caller: { kind: 'guest', sessionId, account: guestAccountOf(sessionId) }, cookie };
}
