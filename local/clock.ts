import type { Clock } from '#core/ports.ts';

export interface MovableClock extends Clock {
  /** Moves the time forward by `ms`; returns the new time. */
  advance(ms: number): Date;
}

/**
 * The embedded stack's clock, moved forward by tests that need days to pass (expiry) instead of waiting
 * them. Lambda reads its machine's clock, and this process is the stack's machine, so the process's `Date`
 * follows it: the handlers (sources or bundles), the SDK's signatures and the stand-ins all read the same
 * moved time, as they would on a machine a week later. The bucket's lifecycle is handed this clock too
 * (local/s3-lifecycle.ts). Worker threads (inference) keep their own `Date`, which nothing there decides on.
 * A webhook receiver outside this process still checks signature times against its own clock.
 */
export function movableProcessClock(): MovableClock {
  const RealDate = Date;
  let offset = 0;
  const now = () => RealDate.now() + offset;
  // A function, not a subclass: `Date()` called without `new` must still answer a string.
  function MovedDate(this: unknown, ...args: unknown[]) {
    if (!new.target) return new RealDate(now()).toString();
    return args.length === 0
      ? new RealDate(now())
      : new (RealDate as unknown as new (...values: unknown[]) => Date)(...args);
  }
  Object.assign(MovedDate, { now, parse: RealDate.parse, UTC: RealDate.UTC });
  MovedDate.prototype = RealDate.prototype;
  globalThis.Date = MovedDate as unknown as DateConstructor;
  return {
    now: () => new RealDate(now()),
    advance(ms) {
      if (!(ms >= 0)) throw new Error(`The clock moves only forward; asked ${ms} ms`);
      offset += ms;
      return new RealDate(now());
    },
  };
}
