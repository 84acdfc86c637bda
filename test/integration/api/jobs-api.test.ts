import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedPhoto } from '../../support/marker-vision.ts';
import { api, photoForm, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

/** The subject here is the API: photos for the marker runner, with a plate (jobs succeed) and without (803). */
let PLATE_PHOTO: Buffer;
let NO_PLATE_PHOTO: Buffer;

describe('jobs API: listing, cancel, retry and the legacy routes', () => {
  let server: RunningServer;

  beforeAll(async () => {
    [server, PLATE_PHOTO, NO_PLATE_PHOTO] = await Promise.all([
      startServer(WITHOUT_MODELS),
      markedPhoto(),
      markedPhoto({ plate: false }),
    ]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lets a browser on another origin call it: preflight answered, Retry-After readable', async () => {
    const preflight = await fetch(`${server.baseUrl}/jobs`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://dealer.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key,idempotency-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('idempotency-key');
    const answer = await fetch(`${server.baseUrl}/quota`, {
      headers: { origin: 'https://dealer.example', 'x-api-key': await server.createKey(1) },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-expose-headers')).toBe('retry-after,location');
  });

  it('lists only the calling key’s jobs, newest first, a page at a time, filtered by status', async () => {
    const key = await server.createKey(100);
    const client = api(server, key);
    const ids: string[] = [];
    for (const file of [PLATE_PHOTO, NO_PLATE_PHOTO, PLATE_PHOTO]) {
      ids.push((await client.postForm('/jobs', photoForm(file))).body.id);
    }
    await api(server, await server.createKey(5)).postForm('/jobs', photoForm(PLATE_PHOTO));
    for (const id of ids) await client.waitForJob(id);

    const first = await client.get('/jobs?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.jobs[0]).toMatchObject({
      id: ids[2],
      operation: 'plate',
      links: { self: `/api/v1/jobs/${ids[2]}` },
    });
    expect(first.body.next_cursor).toEqual(expect.any(Number));
    const second = await client.get(`/jobs?limit=2&before=${first.body.next_cursor}`);
    expect(second.body).toEqual({ jobs: [expect.objectContaining({ id: ids[0] })], next_cursor: null });

    const failed = await client.get('/jobs?status=failed');
    expect(failed.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[1]]);
    expect((await client.get('/jobs')).body.jobs).toHaveLength(3);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'before=-1', 'status=done'])(
    'answers 400 for %s',
    async (query) => {
      const response = await api(server, await server.createKey(0)).get(`/jobs?${query}`);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 400, result: false });
    },
  );

  it('retries a failed job with a new reservation, and refuses to retry or cancel a finished one', async () => {
    const client = api(server, await server.createKey(10));
    const created = await client.postForm('/jobs', photoForm(NO_PLATE_PHOTO));
    const failed = await client.waitForJob(created.body.id);
    expect(failed.body).toMatchObject({ status: 'failed', code: 803, quota: { remaining: 10 } });

    const retried = await client.postJson(`/jobs/${created.body.id}/retry`, {});
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({
      id: created.body.id,
      status: 'queued',
      error: null,
      quota: { remaining: 5 },
    });
    const again = await client.waitForJob(created.body.id);
    expect(again.body).toMatchObject({ status: 'failed', code: 803, attempts: 2, quota: { remaining: 10 } });

    const ok = await client.postForm('/jobs', photoForm(PLATE_PHOTO));
    await client.waitForJob(ok.body.id);
    expect((await client.postJson(`/jobs/${ok.body.id}/retry`, {})).status).toBe(409);
    expect((await client.postJson('/jobs/job_doesnotexist000000000000/retry', {})).status).toBe(404);
  });

  // Under the roles' own grants (local IAM), where reading a missing key is a 403, not a 404.
  it('runs a photo it has not seen, then serves the repeat from the cache, for one tenant only', async () => {
    const photo = await markedPhoto({ seed: 11 });
    const client = api(server, await server.createKey(20));
    const run = async (owner: ReturnType<typeof api>) =>
      (await owner.waitForJob((await owner.postForm('/jobs', photoForm(photo))).body.id)).body;
    expect(await run(client)).toMatchObject({ status: 'success', output: { inference_cached: false } });
    expect(await run(client)).toMatchObject({ status: 'success', output: { inference_cached: true } });
    const other = api(server, await server.createKey(10));
    expect(await run(other)).toMatchObject({ status: 'success', output: { inference_cached: false } });
  });

  it('cancels a job and returns every reserved credit', async () => {
    const client = api(server, await server.createKey(15));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await client.postForm('/jobs', photoForm(PLATE_PHOTO));
      // Spec, states table: a job accepted answers with `job_id` and `status_url`, the path to poll.
      expect(created.status).toBe(202);
      expect(created.body.status_url).toBe(`/api/v1/jobs/${created.body.job_id}`);
      ids.push(created.body.id);
    }
    const cancel = await client.postJson(`/jobs/${ids[2]}/cancel`, {});
    expect([200, 202]).toContain(cancel.status);
    expect(cancel.body.cancel_requested).toBe(true);
    const done = await client.waitForJob(ids[2]!);
    expect(done.body).toMatchObject({ status: 'cancelled', result: false });
    for (const id of ids.slice(0, 2)) await client.waitForJob(id);
    expect(done.body.output).toBeNull();
    expect((await client.get('/quota')).body.quota.remaining).toBe(5);
    expect((await client.postJson(`/jobs/${ids[2]}/cancel`, {})).status).toBe(200);
    expect((await client.postJson(`/jobs/${ids[0]}/cancel`, {})).status).toBe(409);
  });

  it('answers the legacy /process creation response of spec 2.3', async () => {
    const client = api(server, await server.createKey(10));
    const created = await client.postForm(
      '/process',
      photoForm(PLATE_PHOTO, { mode: 'plate', plate_color: 'white' }),
    );
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      result: true,
      queued: true,
      code: 202,
      message: expect.any(String),
      cost_credits: 5,
      job_id: expect.stringMatching(/^job_/),
      status: 'queued',
      status_url: `/api/v1/jobs/${created.body.job_id}`,
      webhook_enabled: false,
      quota: { remaining: 5, credits_remaining: 5, process_credit_cost: 5, classification_credit_cost: 1 },
    });
    const done = await client.waitForJob(created.body.job_id);
    expect(done.body).toMatchObject({
      result: true,
      job_id: created.body.job_id,
      status: 'success',
      code: 200,
      url: expect.stringMatching(/^\/api\/v1\/results\//),
      expires_in_days: 30,
      mode: 'plate',
      plate_color: '#ffffff',
      plate_smoothing: true,
      plate_mask_only: false,
      quota: { remaining: 5, credits_remaining: 5 },
    });
    const refused = await client.postForm('/process', photoForm(PLATE_PHOTO, { mode: 'analyze' }));
    expect(refused.status).toBe(400);
  });

  it('answers the legacy /analyze creation response and charges 1 credit', async () => {
    const client = api(server, await server.createKey(3));
    const created = await client.postForm('/analyze', photoForm(PLATE_PHOTO));
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      result: true,
      queued: true,
      code: 202,
      cost_credits: 1,
      job_id: expect.stringMatching(/^job_/),
      status: 'queued',
      status_url: `/api/v1/jobs/${created.body.job_id}`,
    });
  });
});
