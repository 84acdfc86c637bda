import { describe, expect, it } from 'vitest';
import { balanceFromLedger, type LedgerEntry } from '#core/credits/ledger.ts';

const entry = (kind: LedgerEntry['kind'], amount: number, jobId: string | null = 'job_1'): LedgerEntry => ({
  kind,
  amount,
  jobId,
  at: '2026-11-22T08:00:00.000Z',
});

describe('credit ledger', () => {
  it('rebuilds the balance from a grant, a charged job, a released job and an open reservation', () => {
    const entries = [
      entry('grant', 100, null),
      entry('reserve', 5, 'job_a'),
      entry('charge', 5, 'job_a'),
      entry('reserve', 5, 'job_b'),
      entry('release', 5, 'job_b'),
      entry('reserve', 1, 'job_c'),
    ];
    expect(balanceFromLedger(entries)).toEqual({ available: 94, reserved: 1, usedTotal: 5 });
  });

  it('is an empty account with no entries', () => {
    expect(balanceFromLedger([])).toEqual({ available: 0, reserved: 0, usedTotal: 0 });
  });
});
