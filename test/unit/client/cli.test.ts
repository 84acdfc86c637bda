import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runClientCli } from '../../../client/cli.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A loopback port that nothing listens on: opened, then closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('npm run cli -- jobs', () => {
  it('says in one line that no server answers, what was tried and how to point elsewhere', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => errors.push(line));
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    const code = await runClientCli(['jobs', 'get', 'job_0123456789abcdefghjkmnpq', '--base-url', baseUrl]);
    expect(code).toBe(2);
    expect(errors).toEqual([
      `No photo-jobs server answers at ${baseUrl} (connection refused): start one with npm start, ` +
        'or point elsewhere with --base-url URL or PHOTO_JOBS_BASE_URL',
    ]);
  });
});
