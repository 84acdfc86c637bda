import { describe, expect, it } from 'vitest';
import { reserve, settle } from '#core/credits/credits.ts';
import { InsufficientCreditsError } from '#core/errors.ts';
import { costOf } from '#core/jobs/operations.ts';

describe('credits', () => {
  it('prices edits at 5 credits and analysis at 1', () => {
    expect(costOf('plate')).toBe(5);
    expect(costOf('studio_background')).toBe(5);
    expect(costOf('background_mask')).toBe(5);
    expect(costOf('analyze')).toBe(1);
  });

  it('moves a reservation out of the available balance', () => {
    expect(reserve({ available: 12, reserved: 0, usedTotal: 0 }, 5)).toEqual({
      available: 7,
      reserved: 5,
      usedTotal: 0,
    });
  });

  it('refuses a reservation larger than the balance with a 402 error', () => {
    const attempt = () => reserve({ available: 4, reserved: 0, usedTotal: 0 }, 5);
    expect(attempt).toThrow(InsufficientCreditsError);
    expect(attempt).toThrow(/needs 5 credits; 4 are available/);
  });

  it('charges a settled success and releases anything else', () => {
    const held = { available: 7, reserved: 5, usedTotal: 3 };
    expect(settle(held, 5, 'charge')).toEqual({ available: 7, reserved: 0, usedTotal: 8 });
    expect(settle(held, 5, 'release')).toEqual({ available: 12, reserved: 0, usedTotal: 3 });
  });

  it('never settles more than was reserved', () => {
    expect(() => settle({ available: 0, reserved: 1, usedTotal: 0 }, 5, 'charge')).toThrow(RangeError);
  });

  it('keeps available + reserved + used constant through reserve and charge', () => {
    let account = { available: 100, reserved: 0, usedTotal: 0 };
    for (let i = 0; i < 10; i++) account = reserve(account, 5);
    for (let i = 0; i < 6; i++) account = settle(account, 5, 'charge');
    for (let i = 0; i < 4; i++) account = settle(account, 5, 'release');
    expect(account).toEqual({ available: 70, reserved: 0, usedTotal: 30 });
  });
});
