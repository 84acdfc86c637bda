import { TooManyRequestsError } from '../errors.ts';
import { type RateLimit, rateWindow } from '../limits/rate.ts';
import type { RequestCounter } from '../ports.ts';

/** Who a request counts against: an API key (any presented, valid or not) or a guest's address. */
export type RateClient = { kind: 'key'; keyId: string } | { kind: 'address'; address: string };

export interface RequestRates {
  counter: RequestCounter;
  key: RateLimit;
  guest: RateLimit;
  now(): number;
}

/**
 * Per-client rate limiting, before the request does any work: a key, or a guest without one, over its
 * allowance is 429 with the wait until its next window, and other clients are not affected.
 */
export async function admitRequest(rates: RequestRates, client: RateClient): Promise<void> {
  const limit = client.kind === 'key' ? rates.key : rates.guest;
  const window = rateWindow(limit, rates.now());
  const id = client.kind === 'key' ? `key#${client.keyId}` : `address#${client.address}`;
  if (await rates.counter.admit(id, window)) return;
  const who = client.kind === 'key' ? 'this API key' : 'this address without an API key';
  throw new TooManyRequestsError(
    `Too many requests for ${who} (limit: ${limit.perSecond} a second, bursts of ${limit.burst}); ` +
      `retry in ${window.retryAfterSeconds} s`,
    { retryAfterSeconds: window.retryAfterSeconds },
  );
}
