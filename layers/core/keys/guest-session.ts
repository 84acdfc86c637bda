import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const GUEST_COOKIE = 'pj_guest';
/** A trial session lasts as long as the cookie. */
export const GUEST_SESSION_SECONDS = 30 * 24 * 3600;

export const newGuestSessionId = (): string => randomBytes(18).toString('base64url');

const signatureOf = (sessionId: string, secret: string): string =>
  createHmac('sha256', secret).update(`guest:${sessionId}`).digest('base64url');

/** The cookie value: the session id and an HMAC, so a client cannot mint or pick a session (and its balance). */
export const signGuestSession = (sessionId: string, secret: string): string =>
  `${sessionId}.${signatureOf(sessionId, secret)}`;

export function verifyGuestSession(value: string | undefined, secret: string): string | null {
  if (!value) return null;
  const [sessionId, signature, ...rest] = value.split('.');
  if (!sessionId || !signature || rest.length > 0 || !/^[A-Za-z0-9_-]{16,64}$/.test(sessionId)) return null;
  const expected = Buffer.from(signatureOf(sessionId, secret));
  const actual = Buffer.from(signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? sessionId : null;
}

/**
 * The session of a guest who has none yet: it owns nothing and has no balance. No cookie can carry it
 * (real session ids are 24 characters), so nothing can ever be created under it.
 */
export const NO_GUEST_SESSION = 'none';

export const guestAccountOf = (sessionId: string): string => `guest_${sessionId}`;
