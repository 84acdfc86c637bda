import { InsufficientCreditsError } from '../errors.ts';
import type { Operation } from '../jobs/job.ts';

/** Spec section 8: 5 credits per edit, 1 per analysis. */
export const EDIT_COST = 5;
export const ANALYSIS_COST = 1;

export const costOf = (operation: Operation): number => (operation === 'analyze' ? ANALYSIS_COST : EDIT_COST);

/** The balance of one payer. `available + reserved` never changes except by charge or top-up. */
export interface CreditAccount {
  available: number;
  reserved: number;
  usedTotal: number;
}

export function reserve(account: CreditAccount, amount: number): CreditAccount {
  if (!Number.isInteger(amount) || amount < 0) throw new RangeError(`invalid reservation ${amount}`);
  if (account.available < amount) {
    throw new InsufficientCreditsError(
      `This operation needs ${amount} credits; ${account.available} are available`,
    );
  }
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
