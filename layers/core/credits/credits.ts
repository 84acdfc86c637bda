import { InsufficientCreditsError, TooManyRequestsError } from '../errors.ts';

/** The balance of one payer. `available + reserved` never changes except by charge or top-up. */
export interface CreditAccount {
  available: number;
  reserved: number;
  usedTotal: number;
}

/** How soon a caller at the in-flight limit may try again (`Retry-After`). */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 5;

/**
 * Why a reservation is refused, if it is: too few credits (402) comes first, then the account's jobs
 * queued or processing at the limit (429, MAX_JOBS_IN_FLIGHT). The stores apply the same two guards in
 * the write itself (the DynamoDB condition), and name the refusal with this.
 */
export function reservationRefusal(
  account: { available: number; inFlight: number },
  amount: number,
  maxInFlight: number,
): InsufficientCreditsError | TooManyRequestsError | null {
  if (account.available < amount)
    return new InsufficientCreditsError(
      `This operation needs ${amount} credits; ${account.available} are available`,
    );
  if (account.inFlight >= maxInFlight)
    return new TooManyRequestsError(
      `This account already has ${account.inFlight} jobs queued or processing (limit: jobs in flight); wait for some to finish`,
      { retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS },
    );
  return null;
}

export function reserve(account: CreditAccount, amount: number): CreditAccount {
  if (!Number.isInteger(amount) || amount < 0) throw new RangeError(`invalid reservation ${amount}`);
  const refusal = reservationRefusal({ available: account.available, inFlight: 0 }, amount, Infinity);
  if (refusal) throw refusal;
  return { ...account, available: account.available - amount, reserved: account.reserved + amount };
}

/** Settle a reservation: a success charges it, anything else gives it back. */
export function settle(account: CreditAccount, amount: number, outcome: 'charge' | 'release'): CreditAccount {
  if (amount > account.reserved)
    throw new RangeError(`cannot settle ${amount}; only ${account.reserved} reserved`);
  return outcome === 'charge'
    ? { ...account, reserved: account.reserved - amount, usedTotal: account.usedTotal + amount }
    : { ...account, reserved: account.reserved - amount, available: account.available + amount };
}
