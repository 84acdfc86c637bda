import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** `t=<unix seconds>,v1=<hex>[,v1=<hex>]`: one `v1` per active signing secret, newest first. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** Receivers should refuse a signature whose `t` is further than this from their clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;
/** After a rotation the previous secret keeps signing (as a second `v1`) this long. */
export const ROTATION_OVERLAP_SECONDS = 24 * 60 * 60;

const SECRET_PREFIX = 'whsec_';

/** A signing secret of an API key; `expiresAt` is set once a newer secret replaced it. */
export interface WebhookSecret {
  secret: string;
  createdAt: string;
  expiresAt?: string;
}

export const generateWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/** hex HMAC-SHA256 of `${timestamp}.${body}`: the timestamp is signed so that it cannot be replaced. */
const signPayload = (secret: string, timestamp: number, body: string | Buffer): string =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');

export function signatureHeader(
  secrets: readonly string[],
  timestamp: number,
  body: string | Buffer,
): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signPayload(secret, timestamp, body)}`)].join(
    ',',
  );
}

export function parseSignatureHeader(header: string): { timestamp: number | null; signatures: string[] } {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=', 2) as [string, string?];
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  return { timestamp, signatures };
}

/**
 * What a receiver does: the header must carry a timestamp within `toleranceSeconds` of now (replay window)
 * and at least one `v1` that is the HMAC of `${t}.${rawBody}` under `secret`. Compare raw bytes: a body
 * parsed and serialized again is not the body that was signed.
 */
export function verifySignature(input: {
  header: string | null | undefined;
  body: string | Buffer;
  secret: string;
  nowSeconds?: number;
  toleranceSeconds?: number;
}): boolean {
  if (!input.header) return false;
  const { timestamp, signatures } = parseSignatureHeader(input.header);
  if (timestamp === null || signatures.length === 0) return false;
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signPayload(input.secret, timestamp, input.body), 'hex');
  return signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
}

/** The secrets that sign a delivery made at `now`: unexpired ones, newest first. */
export function signingSecrets(secrets: readonly WebhookSecret[], now: Date): string[] {
  return secrets
    .filter((entry) => !entry.expiresAt || Date.parse(entry.expiresAt) > now.getTime())
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
    .map((entry) => entry.secret);
}

/**
 * A new secret first; the ones still active keep working until `now + overlapSeconds` (an earlier expiry
 * stays); expired ones are dropped. So at most two secrets sign at any time after a single rotation.
 */
export function rotateSecrets(
  secrets: readonly WebhookSecret[],
  fresh: string,
  now: Date,
  overlapSeconds: number = ROTATION_OVERLAP_SECONDS,
): WebhookSecret[] {
  const overlapEnd = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
  const kept = secrets
    .filter((entry) => !entry.expiresAt || Date.parse(entry.expiresAt) > now.getTime())
    .map((entry) => ({
      ...entry,
      expiresAt: entry.expiresAt && entry.expiresAt < overlapEnd ? entry.expiresAt : overlapEnd,
    }));
  return [{ secret: fresh, createdAt: now.toISOString() }, ...kept];
}
