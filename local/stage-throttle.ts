/**
 * An HTTP API stage's default route throttle, as API Gateway applies it: one token bucket for every client
 * of the stage (`ThrottlingRateLimit` tokens a second, `ThrottlingBurstLimit` deep), answered with its own
 * 429 before any function runs. Time comes from `now` (ms) so tests need not wait.
 */
export interface StageThrottle {
  /** Steady requests per second for the whole stage. */
  rate: number;
  /** The bucket's size. */
  burst: number;
}

export function stageThrottle(limit: StageThrottle, now: () => number = () => performance.now()) {
  let tokens = limit.burst;
  let at = now();
  return {
    /** Takes a token; false when the stage is over its rate. */
    admit(): boolean {
      const time = now();
      tokens = Math.min(limit.burst, tokens + ((time - at) / 1000) * limit.rate);
      at = time;
      // A hair of tolerance: tenths of a token added up in floating point fall just short of one.
      if (tokens < 1 - 1e-9) return false;
      tokens -= 1;
      return true;
    },
  };
}
