/** How often, and how long apart, a write that lost a race to another one is tried again. */
export interface BackoffPolicy {
  /** Tries in all, the first one included. */
  attempts: number;
  /** The wait before the second try, at most (ms); it doubles for every later try. */
  baseMs: number;
  /** No wait is longer than this (ms). */
  capMs: number;
}

/**
 * A DynamoDB transaction cancelled by `TransactionConflict` (another transaction held one of its items).
 * Eight tries over about 2.5 s at most keep a 29-second API call well within its time, and leave a
 * conflict that outlasts them to the workflow's own Retry (TransientError).
 */
export const TRANSACTION_CONFLICT_BACKOFF: BackoffPolicy = { attempts: 8, baseMs: 25, capMs: 1000 };

/** A BatchWriteItem whose items came back unprocessed (throttled): waits of at most 0.1 to 6.4 s. */
export const UNPROCESSED_ITEMS_BACKOFF: BackoffPolicy = { attempts: 8, baseMs: 100, capMs: 6400 };

/**
 * The wait before try `attempt + 1` after try `attempt` (1-based) failed: "full jitter", a random share of
 * the capped exponential, so that writers who collided once do not collide again in step.
 * `random` returns [0, 1), as Math.random.
 */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number): number {
  return Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1)));
}
