import type { CreditAccount } from './credits.ts';

type LedgerKind = 'grant' | 'reserve' | 'charge' | 'release';

/** One credit movement of an account, written in the same transaction as the balance it changes. */
export interface LedgerEntry {
  kind: LedgerKind;
  amount: number;
  jobId: string | null;
  at: string;
}

/**
 * The balance an account must have after `entries`. The account item keeps running totals for fast
 * reads; this recomputation is the audit that they never drift.
 */
export function balanceFromLedger(entries: readonly LedgerEntry[]): CreditAccount {
  const account: CreditAccount = { available: 0, reserved: 0, usedTotal: 0 };
  for (const { kind, amount } of entries) {
    if (kind === 'grant') account.available += amount;
    if (kind === 'reserve') {
      account.available -= amount;
      account.reserved += amount;
    }
    if (kind === 'charge') {
      account.reserved -= amount;
      account.usedTotal += amount;
    }
    if (kind === 'release') {
      account.reserved -= amount;
      account.available += amount;
    }
  }
  return account;
}
