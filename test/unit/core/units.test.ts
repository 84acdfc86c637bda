import { describe, expect, it } from 'vitest';
import { formatBytes, formatCount } from '#core/units.ts';

describe('units › formatCount', () => {
  it('groups the digits as en-US writes them, so a document says a number the way its readers read it', () => {
    for (const value of [0, 12, 999, 1000, 4_669_440, 1_234.5, -1_234_567, 10 ** 15, 0.1])
      expect(formatCount(value), String(value)).toBe(value.toLocaleString('en-US'));
  });

  it('keeps the one decimal of a size between whole units', () => {
    expect(formatBytes(4.5 * 1024 * 1024)).toBe('4.5 MB');
    expect(formatBytes(1536 * 1024 * 1024 * 1024)).toBe('1,536 GB');
  });
});
