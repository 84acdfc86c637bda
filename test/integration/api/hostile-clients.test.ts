import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_OVERHEAD_BYTES, MAX_INLINE_BODY_BYTES } from '#core/limits/request.ts';
import { api, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

/**
 * One request on a given agent, answered as status, parsed body and the connection it travelled on. The
 * connection is compared by identity: `req.reusedSocket` is false for a request that queued on the agent and
 * was handed the same socket when the previous request finished writing, which is what happens after an early
 * 413 on a loaded machine.
 */
function raw(
  server: RunningServer,
  agent: http.Agent,
  method: string,
  path: string,
  options: { body?: Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; socket: Socket; connection?: string }> {
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
            socket: req.socket as Socket,
            connection: res.headers.connection,
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
    server = await startServer(WITHOUT_MODELS);
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
    expect(quota.socket).toBe(answer.socket);
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

  it('answers unknown routes with 404 and unknown methods with 405 in the error body, from the $default route', async () => {
    const missing = await fetch(`${server.baseUrl}/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      code: 404,
      message: 'No route /api/v1/nothing-here',
      result: false,
    });
    const wrong = await fetch(`${server.baseUrl}/quota`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect(await wrong.json()).toMatchObject({ code: 405, result: false });
    // A body on an unknown route is not read: its answer is the same.
    const posted = await fetch(`${server.baseUrl}/nothing-here`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(posted.status).toBe(404);
  });

  it('refuses a body whose event is over Lambda’s 6 MB with API Gateway’s 413, and the connection carries the next request', async () => {
    const key = await server.createKey(5);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const boundary = 'xXx';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="big.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      // Past the inline limit by more than the room kept for the rest of the event.
      Buffer.alloc(MAX_INLINE_BODY_BYTES + EVENT_OVERHEAD_BYTES, 7),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answer = await raw(server, agent, 'POST', '/api/v1/batches', {
      body,
      headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(answer.status).toBe(413);
    expect(answer.connection).toBe('keep-alive');
    expect(answer.body).toEqual({ message: 'Request Entity Too Large' });
    const next = await raw(server, agent, 'GET', '/api/v1/quota', { headers: { 'x-api-key': key } });
    expect(next).toMatchObject({ status: 200, body: { quota: { remaining: 5 } } });
    expect(next.socket, 'the next request travels on the same connection').toBe(answer.socket);
    agent.destroy();
  });

  it('fails closed on every doubtful credential: 401, never a guest job', async () => {
    const key = await server.createKey(50);
    const other = await server.createKey(50);
    const agent = new http.Agent({ keepAlive: false });
    const body = Buffer.from(JSON.stringify({ url: 'https://photos.example.com/car.jpg' }));
    for (const headers of [
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Token abc' },
      { authorization: 'Bearer ' },
      { authorization: key },
      { 'x-api-key': '' },
      { 'x-api-key': '   ' },
      { 'x-api-key': key, authorization: `Bearer ${other}` },
      { 'x-api-key': 'pjk_not_a_real_key' },
    ] as Array<Record<string, string>>) {
      const answer = await raw(server, agent, 'POST', '/api/v1/jobs', {
        body,
        headers: { ...headers, 'content-type': 'application/json' },
      });
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(answer.body).toMatchObject({ code: 401, result: false });
    }
    const query = await raw(server, agent, 'GET', `/api/v1/quota?api_key=${key}`, {
      headers: { 'x-api-key': key },
    });
    expect(query.status).toBe(401);
    const same = await raw(server, agent, 'GET', '/api/v1/quota', {
      headers: { 'x-api-key': key, authorization: `Bearer ${key}` },
    });
    expect(same.status).toBe(200);
  });

  it('opens no guest session on a read', async () => {
    for (const path of ['/quota', '/jobs', '/jobs/job_00000000000000000000000000']) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.headers.get('set-cookie'), path).toBeNull();
      expect(response.status).toBeLessThan(500);
    }
  });

  it('never erases a stored webhook URL through a misspelled or missing field', async () => {
    const client = api(server, await server.createKey(5));
    const stored = 'https://hooks.example.com/photo-jobs';
    expect((await client.postJson('/webhook', { webhook_url: stored })).status).toBe(200);
    for (const body of [{}, { webhookurl: '' }, { webhook_URL: '' }, { url: '' }]) {
      const answer = await client.postJson('/webhook', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ code: 400, result: false });
    }
    expect((await client.get('/webhook')).body).toMatchObject({ webhook_url: stored, webhook_enabled: true });
    expect((await client.postJson('/webhook', { webhook_url: '' })).body).toMatchObject({
      webhook_enabled: false,
    });
  });

  it.each([
    'http://0x7f.1/hook',
    'http://2130706433/hook',
    'http://[::ffff:10.0.0.1]/hook',
    'http://[fd00::1]/hook',
    'http://[64:ff9b::a9fe:a9fe]/',
  ])('refuses to store the webhook %s', async (url) => {
    const answer = await api(server, await server.createKey(5)).postJson('/webhook', { webhook_url: url });
    expect(answer.status).toBe(400);
  });

  it('answers 404 for another tenant’s job on every job route', async () => {
    const owner = api(server, await server.createKey(50));
    const stranger = api(server, await server.createKey(50));
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('mode', 'analyze');
    form.append('file', new Blob([png], { type: 'image/png' }), 'car.png');
    const created = await owner.postForm('/jobs', form);
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    expect((await stranger.get(`/jobs/${id}`)).status).toBe(404);
    expect((await stranger.get(`/jobs/${id}/deliveries`)).status).toBe(404);
    for (const path of [`/jobs/${id}/cancel`, `/jobs/${id}/retry`, `/jobs/${id}/deliveries/redeliver`]) {
      const answer = await stranger.postJson(path, {});
      expect(answer.status, path).toBe(404);
      expect(answer.body).toMatchObject({ code: 404, result: false });
    }
    expect((await stranger.get('/jobs')).body.jobs).toEqual([]);
    expect((await fetch(`${server.baseUrl}/jobs/${id}`)).status).toBe(404);
  });

  it('refuses degenerate images at creation, before anything is charged', async () => {
    const key = await server.createKey(10);
    const client = api(server, key);
    const make = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: '#fff' } })
        .png()
        .toBuffer();
    for (const [width, height, status, limit] of [
      [1, 1, 400, 'at least 32 px a side'],
      [2000, 20, 400, 'at least 32 px a side'],
      [3000, 100, 400, 'aspect ratio 16:1'],
    ] as const) {
      const form = new FormData();
      form.append('file', new Blob([await make(width, height)], { type: 'image/png' }), 'thin.png');
      const answer = await client.postForm('/jobs', form);
      expect(answer.status).toBe(status);
      expect(answer.body.message).toContain(limit);
    }
    expect((await client.get('/quota')).body.quota).toMatchObject({ remaining: 10, used_total: 0 });
    expect((await client.get('/jobs')).body.jobs).toEqual([]);
  });
});

describe('no work before the caller can pay', () => {
  let server: RunningServer;
  let host: http.Server;
  const hits: string[] = [];

  beforeAll(async () => {
    server = await startServer({ ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true' });
    host = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await server?.stop();
    host?.closeAllConnections();
    await new Promise((resolve) => host?.close(resolve));
  });

  it('answers 402 to a key without enough credits without fetching its url', async () => {
    const { port } = host.address() as AddressInfo;
    const poor = api(server, await server.createKey(4));
    const edit = await poor.postJson('/jobs', { mode: 'plate', url: `http://127.0.0.1:${port}/car.jpg` });
    expect(edit).toMatchObject({ status: 402, body: { code: 402, result: false } });
    const legacy = new FormData();
    legacy.append('url', `http://127.0.0.1:${port}/legacy.jpg`);
    expect((await api(server, await server.createKey(0)).postForm('/analyze', legacy)).status).toBe(402);
    expect(hits).toEqual([]);
    // With credits the same request does fetch (here a 404, so a 400 and nothing charged).
    const rich = api(server, await server.createKey(5));
    const fetched = await rich.postJson('/jobs', { mode: 'plate', url: `http://127.0.0.1:${port}/car.jpg` });
    expect(fetched.status).toBe(400);
    expect(hits).toEqual(['/car.jpg']);
  });
});
