import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, evalPhotoForm, hasShared, type RunningServer, startServer } from '../support/local-server.ts';

const photoForm = (fields: Record<string, string> = {}) => evalPhotoForm('plates/eu/eu1.jpg', fields);

describe.skipIf(!hasShared)('quota, webhook settings, guests and key placement', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      GUEST_TRIAL_CREDITS: '6',
      GUEST_SESSIONS_PER_ADDRESS_PER_DAY: '3',
      MAX_JOBS_IN_FLIGHT: '2',
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reports the quota of spec 2.9', async () => {
    const client = api(server, await server.createKey(12));
    expect(await client.get('/quota')).toEqual({
      status: 200,
      body: {
        result: true,
        quota: {
          active: true,
          authorized: true,
          remaining: 12,
          credits_remaining: 12,
          user_credits_remaining: 12,
          process_credit_cost: 5,
          classification_credit_cost: 1,
          used_total: 0,
        },
      },
    });
    const master = await api(server, server.masterKey).get('/quota');
    expect(master.body.quota).toMatchObject({ remaining: null, unlimited: true });
  });

  it('stores, reads and clears the key’s default webhook (JSON, form and DELETE)', async () => {
    const key = await server.createKey(0);
    const client = api(server, key);
    expect((await client.get('/webhook')).body).toEqual({
      result: true,
      code: 200,
      message: expect.any(String),
      webhook_url: '',
      webhook_enabled: false,
    });
    const put = await fetch(`${server.baseUrl}/webhook`, {
      method: 'PUT',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook_url: 'https://hooks.example.com/photo-jobs' }),
    });
    expect(await put.json()).toMatchObject({
      webhook_url: 'https://hooks.example.com/photo-jobs',
      webhook_enabled: true,
    });
    const form = await fetch(`${server.baseUrl}/webhook`, {
      method: 'PATCH',
      headers: { 'x-api-key': key },
      body: new URLSearchParams({ webhook_url: 'https://hooks.example.com/v2' }),
    });
    expect(await form.json()).toMatchObject({
      webhook_url: 'https://hooks.example.com/v2',
      webhook_enabled: true,
    });

    const created = await api(server, key).postForm('/process', photoForm());
    expect(created.status).toBe(402);
    const empty = await client.postJson('/webhook', { webhook_url: '' });
    expect(empty.body).toMatchObject({ webhook_url: '', webhook_enabled: false });
    await client.postJson('/webhook', { webhook_url: 'https://hooks.example.com/again' });
    const deleted = await fetch(`${server.baseUrl}/webhook`, {
      method: 'DELETE',
      headers: { 'x-api-key': key },
    });
    expect(await deleted.json()).toMatchObject({ webhook_enabled: false });
  });

  it('uses the stored webhook for new jobs and reports it in the legacy answer', async () => {
    const client = api(server, await server.createKey(5));
    await client.postJson('/webhook', { webhook_url: 'https://hooks.example.com/jobs' });
    const created = await client.postForm('/process', photoForm());
    expect(created.body.webhook_enabled).toBe(true);
  });

  it.each([
    ['ftp://hooks.example.com/x', 400],
    ['http://10.0.0.1/hook', 400],
    ['http://169.254.169.254/latest', 400],
    ['not a url', 400],
  ])('refuses webhook_url %s with %i', async (url, status) => {
    const client = api(server, await server.createKey(0));
    expect((await client.postJson('/webhook', { webhook_url: url })).status).toBe(status);
  });

  it('keeps the master key from storing a webhook and guests from /webhook', async () => {
    expect(
      (await api(server, server.masterKey).postJson('/webhook', { webhook_url: 'https://a.example' })).status,
    ).toBe(400);
    expect((await api(server).get('/webhook')).status).toBe(401);
  });

  it('runs a keyless job on a guest trial balance bound to an HttpOnly session cookie', async () => {
    const read = await fetch(`${server.baseUrl}/quota`);
    expect(read.headers.get('set-cookie')).toBeNull(); // a read never opens a session
    expect(((await read.json()) as { quota: object }).quota).toMatchObject({ active: false, remaining: 0 });

    const first = await fetch(`${server.baseUrl}/jobs`, { method: 'POST', body: photoForm() });
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^pj_guest=[^;]+; Path=\/api\/v1; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const created = (await first.json()) as { id: string; quota: { remaining: number } };
    expect(first.status).toBe(202);
    expect(created.quota.remaining).toBe(1);

    const session = { cookie: cookie.split(';')[0]! };
    const quota = await api(server).get('/quota', session);
    expect(quota.body.quota).toMatchObject({ authorized: false, active: true, remaining: 1 });
    expect((await api(server).get(`/jobs/${created.id}`)).status).toBe(404); // another session cannot see it
    const done = await fetch(`${server.baseUrl}/jobs/${created.id}`, { headers: session });
    expect(((await done.json()) as { status: string }).status).toMatch(/queued|processing|success/);
    expect((await api(server).postForm('/jobs', photoForm(), session)).status).toBe(402);

    const forged = await fetch(`${server.baseUrl}/jobs`, {
      method: 'POST',
      body: JSON.stringify({}),
      headers: { cookie: 'pj_guest=abcdefghijklmnopqrstuvwx.forged', 'content-type': 'application/json' },
    });
    expect(forged.headers.get('set-cookie')).toMatch(/^pj_guest=/);
  });

  it('limits new guest sessions per address and day with 429 and Retry-After', async () => {
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${server.baseUrl}/jobs`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last!.json()).toMatchObject({ code: 429, result: false });
  });

  it('refuses keys in the query string and the api_key form field unless enabled', async () => {
    const key = await server.createKey(5);
    const query = await fetch(`${server.baseUrl}/quota?api_key=${key}`);
    expect(query.status).toBe(401);
    expect(await query.json()).toMatchObject({ message: expect.stringMatching(/query string/) });
    const form = await api(server).postForm('/jobs', photoForm({ api_key: key }));
    expect(form.status).toBe(401);
  });

  it('answers 429 when an account already has its maximum of jobs in flight', async () => {
    const client = api(server, await server.createKey(50));
    // Sent together and slow to run (segmentation), so none ends before the cap is reached, however busy
    // the machine: exactly the cap's worth are taken.
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => client.postForm('/jobs', photoForm({ mode: 'background_mask' }))),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([202, 202, 429, 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.body).toMatchObject({ code: 429, result: false });
    const quota = await client.get('/quota');
    expect(quota.body.quota.remaining).toBe(50 - 2 * 5);
  });
});
