/** A client's allowance: a token bucket for requests per second and a cap on requests open at once. */
export interface RateLimit {
  /** Sustained requests per second. */
  perSecond: number;
  /** Requests that may arrive at once after a quiet spell (the bucket's size). */
  burst: number;
  /** Requests of one client being worked on at the same moment. */
  inFlight: number;
}

export type Admission =
  | { admitted: true; release(): void }
  | { admitted: false; limit: 'requests per second' | 'requests in flight'; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
  open: number;
}

/** Buckets kept before idle ones (full, nothing open) are swept, so many clients cannot grow memory. */
const SWEEP_AT = 10_000;

/**
 * Rate limiting per client id (an API key or a guest's address). Pure: time comes from `now` (ms), so the
 * same numbers can be checked by a test without waiting.
 */
export function rateLimiter(limit: RateLimit, now: () => number = () => performance.now()) {
  const buckets = new Map<string, Bucket>();
  const refill = (bucket: Bucket, at: number) => {
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((at - bucket.at) / 1000) * limit.perSecond);
    bucket.at = at;
  };
  const sweep = (at: number) => {
    for (const [id, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.open === 0 && bucket.tokens >= limit.burst) buckets.delete(id);
    }
  };
  return {
    admit(id: string): Admission {
      const at = now();
      let bucket = buckets.get(id);
      if (!bucket) {
        if (buckets.size >= SWEEP_AT) sweep(at);
        bucket = { tokens: limit.burst, at, open: 0 };
        buckets.set(id, bucket);
      } else refill(bucket, at);
      if (bucket.open >= limit.inFlight) {
        return { admitted: false, limit: 'requests in flight', retryAfterSeconds: 1 };
      }
      // A hair of tolerance: tenths of a token added up in floating point fall just short of one.
      if (bucket.tokens < 1 - 1e-9) {
        return {
          admitted: false,
          limit: 'requests per second',
          retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond)),
        };
      }
      bucket.tokens -= 1;
      bucket.open += 1;
      const held = bucket;
      let released = false;
      return {
        admitted: true,
        release() {
          if (released) return;
          released = true;
          held.open -= 1;
        },
      };
    },
    /** Clients currently tracked (for tests of the sweep). */
    get size() {
      return buckets.size;
    },
  };
}

/** Per API key (any presented key, valid or not) and per guest address; the same numbers as docs/security.md. */
export const DEFAULT_KEY_RATE: RateLimit = { perSecond: 100, burst: 200, inFlight: 64 };
export const DEFAULT_GUEST_RATE: RateLimit = { perSecond: 10, burst: 20, inFlight: 8 };
