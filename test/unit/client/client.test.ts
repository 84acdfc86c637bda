import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient, PhotoJobsError, WaitTimeoutError } from '../../../client/index.ts';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that answers from a script, one answer a call, and records what was asked. */
function scripted(answers: Answer[] | ((url: string, init: RequestInit) => Answer)) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = vi.fn(async (url: string | URL | Request, init: RequestInit = {}) => {
    calls.push({ url: String(url), init });
    const answer = typeof answers === 'function' ? answers(String(url), init) : answers.shift();
    if (!answer) throw new Error(`no scripted answer for ${String(url)}`);
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...answer.headers },
    });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

const job = (status: string) => ({ id: 'job_1', job_id: 'job_1', status, operation: 'plate' });

afterEach(() => {
  vi.useRealTimers();
});

describe('photo-jobs/client', () => {
  it('sends the key, finds the API under a bare origin, and turns an error body into PhotoJobsError', async () => {
    const { fetch, calls } = scripted([
      {
        status: 401,
        body: { code: 401, message: 'The API key is not valid or has been disabled', result: false },
      },
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000/', apiKey: 'pjk_x', fetch });
    const error = await client.getJob('job_1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PhotoJobsError);
    expect(error).toMatchObject({
      status: 401,
      code: 401,
      message: 'The API key is not valid or has been disabled',
    });
    expect(calls[0]!.url).toBe('http://127.0.0.1:3000/api/v1/jobs/job_1');
    expect((calls[0]!.init.headers as Record<string, string>)['x-api-key']).toBe('pjk_x');
  });

  it('keeps the 422 reason code apart from the status, and Retry-After of a 429', async () => {
    const { fetch } = scripted([
      { status: 422, body: { code: 803, message: 'No license plate was detected', result: false } },
      {
        status: 429,
        body: { code: 429, message: 'Too many', result: false },
        headers: { 'retry-after': '7' },
      },
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000/api/v1', fetch });
    await expect(client.getJob('a')).rejects.toMatchObject({ status: 422, code: 803 });
    await expect(client.getJob('b')).rejects.toMatchObject({ status: 429, retryAfterSeconds: 7 });
  });

  it('waits for a job with a growing delay and reports every state it read', async () => {
    vi.useFakeTimers();
    const { fetch, calls } = scripted([
      { status: 200, body: job('queued') },
      { status: 200, body: job('processing') },
      { status: 200, body: job('processing') },
      { status: 200, body: job('success') },
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000', fetch });
    const seen: string[] = [];
    const at: number[] = [];
    const done = client.waitForJob('job_1', {
      onProgress: (state) => {
        seen.push(state.status);
        at.push(Date.now());
      },
    });
    await vi.runAllTimersAsync();
    expect((await done).status).toBe('success');
    expect(seen).toEqual(['queued', 'processing', 'processing', 'success']);
    expect(calls).toHaveLength(4);
    const gaps = at.slice(1).map((time, i) => time - at[i]!);
    expect(gaps).toEqual([1000, 1200, 1440]);
  });

  it('gives up at the timeout, and stops at once when its signal is aborted', async () => {
    vi.useFakeTimers();
    const { fetch } = scripted(() => ({ status: 200, body: job('processing') }));
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000', fetch });
    const timedOut = client.waitForJob('job_1', { timeoutMs: 2_000 }).catch((caught: unknown) => caught);
    await vi.runAllTimersAsync();
    expect(await timedOut).toBeInstanceOf(WaitTimeoutError);

    const controller = new AbortController();
    const aborted = client
      .waitForJob('job_1', { signal: controller.signal })
      .catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error('stopped by the user'));
    expect(await aborted).toMatchObject({ message: 'stopped by the user' });
  });

  it('sends the image options as they are, and a batch’s background file with its archive in one form', async () => {
    const { fetch, calls } = scripted(() => ({ status: 202, body: { batch: {}, ...job('queued') } }));
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000', fetch });
    await client.createJob({
      mode: 'studio_background',
      url: 'https://example.test/car.jpg',
      background: 'transparent',
      format: 'webp',
      max_width: 1200,
      framing: 'center',
      shadow: true,
    });
    expect(JSON.parse(String(calls[0]!.init.body))).toMatchObject({
      background: 'transparent',
      format: 'webp',
      max_width: 1200,
      framing: 'center',
      shadow: true,
    });
    await client.createBatch({
      mode: 'studio_background',
      archive: new Uint8Array([0x50, 0x4b, 3, 4]),
      background_file: new Uint8Array([0xff, 0xd8, 0xff]),
      format: 'png',
      max_width: '800',
    });
    const form = calls[1]!.init.body as FormData;
    expect(form.get('format')).toBe('png');
    expect(form.get('max_width')).toBe('800');
    expect(form.get('background_file')).toBeInstanceOf(Blob);
    expect(form.get('archive')).toBeInstanceOf(Blob);
  });

  it('lists jobs page after page by the cursor until there is none', async () => {
    const { fetch, calls } = scripted([
      { status: 200, body: { jobs: [job('success'), { ...job('failed'), id: 'job_2' }], next_cursor: 41 } },
      { status: 200, body: { jobs: [{ ...job('success'), id: 'job_3' }], next_cursor: null } },
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000', fetch });
    const ids: string[] = [];
    for await (const listed of client.listJobs({ pageSize: 2, status: 'success' })) ids.push(listed.id);
    expect(ids).toEqual(['job_1', 'job_2', 'job_3']);
    expect(calls.map((call) => new URL(call.url).search)).toEqual([
      '?limit=2&status=success',
      '?limit=2&status=success&before=41',
    ]);
  });

  it('asks again while a batch download is being built (202, Retry-After)', async () => {
    vi.useFakeTimers();
    let asked = 0;
    const fetch = vi.fn(async () => {
      asked += 1;
      return asked === 1
        ? new Response('{"status":"building"}', { status: 202, headers: { 'retry-after': '2' } })
        : new Response(new Uint8Array([0x50, 0x4b, 3, 4]), { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'pjk_x', fetch });
    const bytes = client.downloadBatch('bat_1');
    await vi.advanceTimersByTimeAsync(1_999);
    expect(asked).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect([...(await bytes)]).toEqual([0x50, 0x4b, 3, 4]);
  });
});
