import { describe, expect, it } from 'vitest';
import { rateLimiter } from '#core/rate-limit.ts';

describe('rate limiter', () => {
  const limit = { perSecond: 10, burst: 20, inFlight: 5 };

  it('lets a burst through, then refuses with the time until the next token', () => {
    let now = 0;
    const limiter = rateLimiter({ ...limit, inFlight: 100 }, () => now);
    for (let i = 0; i < 20; i++) expect(limiter.admit('k').admitted).toBe(true);
    const refused = limiter.admit('k');
    expect(refused).toEqual({ admitted: false, limit: 'requests per second', retryAfterSeconds: 1 });
    now += 100; // one token back at 10 a second
    expect(limiter.admit('k').admitted).toBe(true);
    expect(limiter.admit('k').admitted).toBe(false);
  });

  it('holds a steady rate at the sustained number', () => {
    let now = 0;
    const limiter = rateLimiter({ perSecond: 10, burst: 1, inFlight: 100 }, () => now);
    let admitted = 0;
    for (let ms = 0; ms < 10_000; ms += 10) {
      now = ms;
      const admission = limiter.admit('k');
      if (admission.admitted) {
        admitted += 1;
        admission.release();
      }
    }
    expect(admitted).toBeGreaterThanOrEqual(99);
    expect(admitted).toBeLessThanOrEqual(101);
  });

  it('caps requests in flight per client and frees a slot on release', () => {
    const limiter = rateLimiter(limit, () => 0);
    const open = Array.from({ length: 5 }, () => limiter.admit('k'));
    expect(open.every((admission) => admission.admitted)).toBe(true);
    expect(limiter.admit('k')).toMatchObject({ admitted: false, limit: 'requests in flight' });
    expect(limiter.admit('other').admitted).toBe(true);
    const first = open[0]!;
    if (first.admitted) {
      first.release();
      first.release(); // twice frees one slot, not two
    }
    expect(limiter.admit('k').admitted).toBe(true);
    expect(limiter.admit('k').admitted).toBe(false);
  });

  it('forgets idle clients, so many addresses cannot grow memory without bound', () => {
    let now = 0;
    const limiter = rateLimiter(limit, () => now);
    for (let i = 0; i < 10_000; i++) {
      const admission = limiter.admit(`client ${i}`);
      if (admission.admitted) admission.release();
    }
    now += 10_000;
    limiter.admit('late');
    expect(limiter.size).toBe(1);
  });
});
