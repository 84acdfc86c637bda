/** A client's allowance: sustained requests per second, and how many may come at once. */
export interface RateLimit {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests that may arrive at once after a quiet spell. */
  burst: number;
}

/**
 * One fixed window of a client's allowance, counted in the table by every function alike (API Gateway's
 * HTTP APIs have no per-client throttle: its stage limit is shared by all clients).
 */
export interface RateWindow {
  /** Names the window: its start, in epoch seconds. */
  readonly start: number;
  /** Requests admitted in it. */
  readonly max: number;
  /** Until the next window opens, from now. */
  readonly retryAfterSeconds: number;
  /** When its counter may go (the table's TTL, epoch seconds); DynamoDB drops it within days. */
  readonly expiresAt: number;
}

/**
 * The window `nowMs` falls in. A window holds one burst and lasts as long as a burst takes at the
 * sustained rate, so the rate holds on average with one write per request and no read; a client can get
 * two bursts across a window's edge, which a token bucket would not give, but a token bucket needs a read
 * before every write.
 */
export function rateWindow(limit: RateLimit, nowMs: number): RateWindow {
  const seconds = Math.max(1, Math.ceil(limit.burst / limit.perSecond));
  const start = Math.floor(nowMs / 1000 / seconds) * seconds;
  return {
    start,
    max: limit.burst,
    retryAfterSeconds: Math.max(1, Math.ceil(start + seconds - nowMs / 1000)),
    expiresAt: start + seconds + 3600,
  };
}

/** Per API key (any presented key, valid or not) and per guest address; the same numbers as docs/security.md. */
export const DEFAULT_KEY_RATE: RateLimit = { perSecond: 100, burst: 200 };
export const DEFAULT_GUEST_RATE: RateLimit = { perSecond: 10, burst: 20 };
