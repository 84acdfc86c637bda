import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type RunningServer, startServer } from '../support/local-server.ts';

const KEY_BURST = 10;

/**
 * Per-client limits as AWS runs them (issue 35): counted by the API functions in the table, since an HTTP
 * API's stage throttle is shared by every client. `npm start` runs the same functions on the same counter.
 */
describe('a flood from one key', () => {
  let server: RunningServer;
  beforeAll(async () => {
    // Small allowances, so that 20 times one fits in a test; windows of 100 s, so that even a slow machine's
    // flood lands in one or two.
    server = await startServer({
      RATE_LIMIT_KEY_PER_SECOND: '0.1',
      RATE_LIMIT_KEY_BURST: String(KEY_BURST),
      RATE_LIMIT_GUEST_PER_SECOND: '0.1',
      RATE_LIMIT_GUEST_BURST: '10',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is refused past its allowance, in the error body with Retry-After, while another key and a guest are served', async () => {
    const [flooder, other] = await Promise.all([server.createKey(5), server.createKey(5)]);
    const flood = await Promise.all(
      Array.from({ length: 20 * KEY_BURST }, () =>
        fetch(`${server.baseUrl}/quota`, { headers: { 'x-api-key': flooder } }).then(async (response) => ({
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body: await response.json(),
        })),
      ),
    );
    const served = flood.filter((answer) => answer.status === 200).length;
    const refused = flood.filter((answer) => answer.status === 429);
    // Two windows at most: a window's edge may fall inside the flood.
    expect(served).toBeGreaterThanOrEqual(KEY_BURST);
    expect(served).toBeLessThanOrEqual(2 * KEY_BURST);
    expect(refused.length).toBe(flood.length - served);
    expect(refused[0]).toMatchObject({
      body: {
        code: 429,
        result: false,
        message: expect.stringMatching(/this API key \(limit: 0\.1 a second/),
      },
    });
    expect(Number(refused[0]!.retryAfter)).toBeGreaterThanOrEqual(1);

    expect((await api(server, other).get('/quota')).status).toBe(200);
    expect((await api(server).get('/quota')).status).toBe(200);
    // The flooder is still refused, and a wrong key counts against itself, not against a real one.
    expect((await api(server, flooder).get('/quota')).status).toBe(429);
    expect((await api(server, 'pjk_not_a_key').get('/quota')).status).toBe(401);
  });
});
