import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  api,
  photoForm,
  type RunningServer,
  startServer,
  untilWorkflowsIdle,
  WITHOUT_MODELS,
} from '../support/local-server.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Sources expire 7 days after a job's creation and results 30 days after it finished, by the bucket's
 * lifecycle rules. The server's clock is moved forward instead of waiting (local/clock.ts): its handlers
 * and its bucket, which applies the template's rules, see the same later time.
 */
describe('expired photos and results', () => {
  let server: RunningServer;
  let client: ReturnType<typeof api>;
  let succeeded: { id: string; url: string; finished_at: string; expires_at: string };
  let failed: { id: string };
  const quota = async () => (await client.get('/quota')).body.quota;
  const result = (url: string) => fetch(`${server.origin}${url}`, { redirect: 'manual' });

  beforeAll(async () => {
    const [started, withPlate, withoutPlate] = await Promise.all([
      startServer(WITHOUT_MODELS, { movableClock: true }),
      markedPhoto(),
      markedPhoto({ plate: false }),
    ]);
    server = started;
    client = api(server, await server.createKey(20));
    const ids = [];
    for (const photo of [withPlate, withoutPlate])
      ids.push((await client.postForm('/jobs', photoForm(photo))).body.id as string);
    succeeded = (await client.waitForJob(ids[0]!)).body as typeof succeeded;
    failed = (await client.waitForJob(ids[1]!)).body as typeof failed;
    await untilWorkflowsIdle(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('shows when a result expires: 30 days after the job finished; a failed job has nothing to expire', async () => {
    expect(succeeded).toMatchObject({ status: 'success', url: expect.stringMatching(/result\.jpg$/) });
    expect(Date.parse(succeeded.expires_at)).toBe(Date.parse(succeeded.finished_at) + 30 * DAY);
    expect(failed).toMatchObject({ status: 'failed', code: 803, expires_at: null });
    expect((await result(succeeded.url)).status).toBe(302);
  });

  it('answers 410 to the retry of a job whose photo expired, before reserving anything', async () => {
    const before = await quota();
    await server.advanceClock(7 * DAY + MINUTE);
    const retry = await client.postJson(`/jobs/${failed.id}/retry`, {});
    expect(retry.status).toBe(410);
    expect(retry.body).toEqual({
      code: 410,
      message: expect.stringMatching(
        new RegExp(`^The photos of job ${failed.id} expired at .+; create a new job. Nothing was charged$`),
      ),
      result: false,
    });
    expect(await quota()).toEqual(before);
    expect((await client.get(`/jobs/${failed.id}`)).body).toMatchObject({ status: 'failed', code: 803 });
    // The bucket's rule has deleted the photo by the next midnight; the answer stays the same.
    await server.advanceClock(DAY);
    expect((await client.postJson(`/jobs/${failed.id}/retry`, {})).status).toBe(410);
    expect(await quota()).toEqual(before);
    // A result lives longer than its photo.
    expect((await result(succeeded.url)).status).toBe(302);
  });

  it('answers 410 in the error body for an expired result, and the job no longer links to it', async () => {
    const before = await quota();
    const untilExpiry = Date.parse(succeeded.expires_at) - (await server.advanceClock(0)).getTime();
    await server.advanceClock(untilExpiry + MINUTE);
    for (const elapsed of [0, DAY]) {
      await server.advanceClock(elapsed);
      const answer = await result(succeeded.url);
      expect(answer.status).toBe(410);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await answer.json()).toEqual({
        code: 410,
        message: `This result expired at ${succeeded.expires_at} and is deleted: results are kept 30 days after the job finished`,
        result: false,
      });
    }
    const job = (await client.get(`/jobs/${succeeded.id}`)).body;
    expect(job).toMatchObject({ status: 'success', expires_at: succeeded.expires_at, expires_in_days: 30 });
    expect(job).not.toHaveProperty('url');
    expect(job.output).not.toHaveProperty('url');
    expect(job.links).not.toHaveProperty('result');
    const listed = (await client.get('/jobs')).body.jobs.find(
      (each: { id: string }) => each.id === succeeded.id,
    );
    expect(listed.output).not.toHaveProperty('url');
    expect(await quota()).toEqual(before);
  });
});
