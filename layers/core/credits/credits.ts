import { InsufficientCreditsError } from '../errors.ts';
import { PRICES } from '../jobs/operations.ts';

/** Spec section 8, as the operation registry states them. */
export const EDIT_COST = PRICES.edit;
export const ANALYSIS_COST = PRICES.analysis;

export { costOf } from '../jobs/operations.ts';

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
