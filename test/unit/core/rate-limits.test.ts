import { describe, expect, it } from 'vitest';
import { TooManyRequestsError } from '#core/errors.ts';
import { rateWindow } from '#core/limits/rate.ts';
import type { RequestCounter } from '#core/ports.ts';
import { admitRequest, type RequestRates } from '#core/use-cases/admit-request.ts';

/** The table's counter, as the conditional ADD of layers/aws/dynamodb-request-counter.ts counts. */
function memoryCounter(): RequestCounter {
  const counts = new Map<string, number>();
  return {
    async admit(client, window) {
      const id = `${client}#${window.start}`;
      const count = counts.get(id) ?? 0;
      if (count >= window.max) return false;
      counts.set(id, count + 1);
      return true;
    },
  };
}

describe('per-client request windows', () => {
  it('hold one burst and last as long as the burst takes at the sustained rate', () => {
    const window = rateWindow({ perSecond: 100, burst: 200 }, 1_000_500);
    expect(window).toMatchObject({ start: 1000, max: 200, retryAfterSeconds: 2 });
    expect(rateWindow({ perSecond: 100, burst: 200 }, 1_001_999).start).toBe(1000);
    expect(rateWindow({ perSecond: 100, burst: 200 }, 1_002_000).start).toBe(1002);
    expect(window.expiresAt).toBeGreaterThan(1002);
  });
});

describe('admitting a request', () => {
  const setup = () => {
    let now = 10_000;
    const rates: RequestRates = {
      counter: memoryCounter(),
      key: { perSecond: 2, burst: 4 },
      guest: { perSecond: 1, burst: 1 },
      now: () => now,
    };
    return { rates, advance: (ms: number) => (now += ms) };
  };

  it('refuses a key past its burst with 429 and the wait, and leaves another key served', async () => {
    const { rates, advance } = setup();
    const a = { kind: 'key', keyId: 'key_a' } as const;
    for (let i = 0; i < 4; i++) await admitRequest(rates, a);
    const refused = admitRequest(rates, a);
    await expect(refused).rejects.toThrow(TooManyRequestsError);
    await expect(refused).rejects.toThrow(/this API key \(limit: 2 a second, bursts of 4\)/);
    await expect(admitRequest(rates, a)).rejects.toMatchObject({ status: 429, retryAfterSeconds: 2 });
    await expect(admitRequest(rates, { kind: 'key', keyId: 'key_b' })).resolves.toBeUndefined();
    advance(2000);
    await expect(admitRequest(rates, a)).resolves.toBeUndefined();
  });

  it('counts guests by address, at the guest allowance', async () => {
    const { rates } = setup();
    await admitRequest(rates, { kind: 'address', address: '198.51.100.7' });
    await expect(admitRequest(rates, { kind: 'address', address: '198.51.100.7' })).rejects.toThrow(
      /this address without an API key/,
    );
    await expect(admitRequest(rates, { kind: 'address', address: '198.51.100.8' })).resolves.toBeUndefined();
  });
});
