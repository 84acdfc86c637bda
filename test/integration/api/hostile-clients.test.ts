import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INLINE_BODY_BYTES } from '#core/limits.ts';
import { api, type RunningServer, startServer } from '../support/local-server.ts';

/** One request on a given agent, answered as status, parsed body and whether the socket was reused. */
function raw(
  server: RunningServer,
  agent: http.Agent,
  method: string,
  path: string,
  options: { body?: Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; reusedSocket: boolean }> {
  const { hostname, port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: hostname, port, method, path, agent, headers: options.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'),
            reusedSocket: req.reusedSocket,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('hostile clients against npm start', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('survives a path with broken percent-encoding and answers 404 in the error body', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const answer = await raw(server, agent, 'GET', '/api/v1/jobs/%E0%A4%A');
    expect(answer).toMatchObject({ status: 404, body: { code: 404, result: false } });
    const quota = await raw(server, agent, 'GET', '/api/v1/quota', {
      headers: { 'x-api-key': server.masterKey },
    });
    expect(quota.status).toBe(200);
    expect(quota.reusedSocket).toBe(true);
    agent.destroy();
  });

  it.each([
    ['a very long id', `job_${'x'.repeat(3000)}`],
    ['an id at the limit', 'j'.repeat(128)],
    ['an id with odd characters', encodeURIComponent('job_ü€ 👀')],
    ['an id with a slash', encodeURIComponent('job_/../quota')],
  ])('answers %s with 404 on every id route, never 500', async (_label, id) => {
    const client = api(server, await server.createKey(5));
    for (const path of [
      `/jobs/${id}`,
      `/jobs/${id}/deliveries`,
      `/batches/${id}`,
      `/results/${id}/result.jpg`,
    ]) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).toMatchObject({ code: 404, result: false });
    }
    for (const path of [`/jobs/${id}/cancel`, `/jobs/${id}/retry`, `/batches/${id}/pause`]) {
      expect((await client.postJson(path, {})).status, path).toBe(404);
    }
  });

  it('answers unknown routes with 404 and unknown methods with 405 in the error body', async () => {
    const missing = await fetch(`${server.baseUrl}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 404, result: false });
    const wrong = await fetch(`${server.baseUrl}/quota`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(await wrong.json()).toMatchObject({ code: 405, result: false });
  });

  it('refuses a body over the inline limit with 413, and the connection carries the next request', async () => {
    const key = await server.createKey(5);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const boundary = 'xXx';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="big.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      Buffer.alloc(MAX_INLINE_BODY_BYTES, 7),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await raw(server, agent, 'POST', '/api/v1/batches', {
      body,
      headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({
      code: 413,
      message: expect.stringContaining(`${MAX_INLINE_BODY_BYTES} bytes (limit: inline body)`),
      result: false,
    });
    const next = await raw(server, agent, 'GET', '/api/v1/quota', { headers: { 'x-api-key': key } });
    expect(next).toMatchObject({ status: 200, reusedSocket: true, body: { quota: { remaining: 5 } } });
    agent.destroy();
  });
});
