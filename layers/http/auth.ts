import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { TooManyRequestsError, UnauthorizedError } from '#core/errors.ts';
import { hashSecret, keyIdOf, secretMatches } from '#core/keys/api-key.ts';
import type { Caller } from '#core/keys/caller.ts';
import {
  GUEST_COOKIE,
  GUEST_SESSION_SECONDS,
  guestAccountOf,
  NO_GUEST_SESSION,
  newGuestSessionId,
  signGuestSession,
  verifyGuestSession,
} from '#core/keys/guest-session.ts';
import type { VerifiedKeys } from '#core/keys/verified-keys.ts';
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

/**
 * The presented API key, from the places this server accepts. It fails closed: an empty key, an
 * `Authorization` header that is not `Bearer <key>`, keys in two places that differ, or a key where this
 * server does not accept one are all 401, never a guest request.
 */
export function presentedKey(
  event: APIGatewayProxyEventV2,
  formFields: Record<string, unknown>,
  policy: AuthPolicy,
): string | null {
  const keys: string[] = [];
  const headerKey = event.headers?.['x-api-key'];
  if (headerKey !== undefined) {
    if (!headerKey.trim()) throw new UnauthorizedError('X-API-Key is empty');
    keys.push(headerKey.trim());
  }
  const authorization = event.headers?.authorization;
  if (authorization !== undefined) {
    const bearer = authorization.match(/^Bearer +(\S+) *$/i)?.[1];
    if (!bearer) throw new UnauthorizedError('Authorization must be "Bearer <API key>"');
    keys.push(bearer);
  }
  const queryKey = event.queryStringParameters?.api_key;
  if (queryKey !== undefined) {
    if (!policy.allowKeyInQuery) {
      throw new UnauthorizedError('API keys in the query string are disabled on this server; send X-API-Key');
    }
    if (!queryKey.trim()) throw new UnauthorizedError('api_key is empty');
    keys.push(queryKey.trim());
  }
  const formKey = formFields.api_key;
  // An empty form field counts as not sent (HTML forms send every input).
  if (formKey !== undefined && formKey !== '') {
    if (!policy.allowKeyInForm) {
      throw new UnauthorizedError('The api_key form field is disabled on this server; send X-API-Key');
    }
    if (typeof formKey !== 'string' || !formKey.trim()) throw new UnauthorizedError('api_key is empty');
    keys.push(formKey.trim());
  }
  if (new Set(keys).size > 1) throw new UnauthorizedError('Two different API keys were sent; send one');
  return keys[0] ?? null;
}

/**
 * The caller a key stands for. With `recent`, a read (`read: true`) may be authenticated by a key this
 * process verified in the last few seconds (core/keys/verified-keys.ts); anything else reads the key's
 * record, and a key found unknown or disabled is forgotten at once, so it stops reading too.
 */
export async function callerForKey(
  deps: AuthDeps,
  apiKey: string,
  recent?: { keys: VerifiedKeys; read: boolean },
): Promise<Caller> {
  if (deps.masterKeySha256 && secretMatches(apiKey, deps.masterKeySha256)) return { kind: 'master' };
  const secretHash = hashSecret(apiKey);
  const known = recent?.read ? recent.keys.recall(secretHash) : undefined;
  const record = known ?? (await deps.keys.findById(keyIdOf(secretHash)));
  // Unknown and disabled keys get the same answer, so keys cannot be probed.
  if (!record || record.disabled || !secretMatches(apiKey, record.secretHash)) {
    recent?.keys.forget(secretHash);
    throw new UnauthorizedError('The API key is not valid or has been disabled');
  }
  if (!known) recent?.keys.remember(secretHash, record);
  return { kind: 'key', keyId: record.keyId, account: record.keyId, defaults: record.defaults };
}

/**
 * A request without a key runs against the guest trial balance of its session (spec 5.4). The session
 * is a signed cookie; a new one is opened with the trial credits, at most a few per address a day, so
 * that dropping the cookie is not a way to mint credits.
 */
export async function guestCaller(
  deps: Omit<AuthDeps, 'masterKeySha256'>,
  event: APIGatewayProxyEventV2,
  options: { open: boolean },
): Promise<Authenticated> {
  const secret = await deps.guests.signingSecret();
  const existing = verifyGuestSession(cookieOf(event, GUEST_COOKIE), secret);
  if (existing) return { caller: { kind: 'guest', sessionId: existing, account: guestAccountOf(existing) } };
  if (!options.open) {
    // Only a job opens a session: reads, cancels and retries without one see an empty session.
    return {
      caller: { kind: 'guest', sessionId: NO_GUEST_SESSION, account: guestAccountOf(NO_GUEST_SESSION) },
    };
  }

  const address = event.requestContext?.http?.sourceIp ?? 'unknown';
  const day = new Date().toISOString().slice(0, 10);
  if (!(await deps.guests.admitNewSession(address, day, deps.policy.guestSessionsPerAddressPerDay))) {
    const tomorrow = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
    throw new TooManyRequestsError(
      `Too many trial sessions from this address today (limit: ${deps.policy.guestSessionsPerAddressPerDay} a day); use an API key`,
      { retryAfterSeconds: (tomorrow - Date.now()) / 1000 },
    );
  }
  const sessionId = newGuestSessionId();
  await deps.accounts.open(guestAccountOf(sessionId), deps.policy.guestTrialCredits);
  const secure = event.headers?.['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  const cookie = `${GUEST_COOKIE}=${signGuestSession(sessionId, secret)}; Path=/api/v1; Max-Age=${GUEST_SESSION_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
  return { caller: { kind: 'guest', sessionId, account: guestAccountOf(sessionId) }, cookie };
}
