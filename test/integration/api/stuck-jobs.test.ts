import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbJobs } from '#aws/dynamodb-jobs.ts';
import { newJobId, newSequence } from '#core/jobs/ids.ts';
import { LOCAL_TABLE } from '../../../local/stack.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  adminDynamo,
  api,
  photoForm,
  type RunningServer,
  startServer,
  WITHOUT_MODELS,
} from '../support/local-server.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

const HOUR_MS = 3_600_000;

/**
 * A job whose run was lost while it processed (an Express run cut at five minutes, a crashed host) is failed
 * by the sweeper of stuck work. Its webhook receiver and the event bus must hear of it as of any failure.
 */
describe('a job the sweeper fails', () => {
  const servers: RunningServer[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const env = { ...WITHOUT_MODELS, OUTBOUND_ALLOW_LOOPBACK: 'true', WEBHOOK_TIMEOUT_MS: '400' };

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const server of servers.reverse()) await server.stop().catch(() => undefined);
    await receiver?.close();
  });

  it('delivers job.failed to its webhook and publishes it on the bus, once', async () => {
    const first = await startServer(env);
    servers.push(first);
    const key = await first.createKey(20);
    // A real job of this key gives the stored shape; its copy is left processing, as a lost run leaves it.
    const created = await api(first, key).postForm(
      '/jobs',
      photoForm(await markedPhoto(), { mode: 'plate' }),
    );
    expect(created.status).toBe(202);
    await api(first, key).waitForJob(created.body.id);
    const dynamodb = await adminDynamo(first);
    const jobs = dynamodbJobs(dynamodb, LOCAL_TABLE, () => new Date(), 20);
    const real = (await jobs.get(created.body.id))!;
    const lostAt = new Date(Date.now() - HOUR_MS).toISOString();
    const lost = {
      ...real,
      id: newJobId(),
      seq: newSequence(Date.now()),
      status: 'processing' as const,
      stage: 'preparing' as const,
      createdAt: lostAt,
      startedAt: lostAt,
      finishedAt: null,
      output: null,
      error: null,
      reservedCredits: 0,
      chargedCredits: 0,
      version: 1,
      params: { ...real.params, webhookUrl: receiver.url('/hooks/lost') },
    };
    expect(await jobs.insert(lost, null, null)).toEqual({ inserted: true });
    dynamodb.destroy();
    await first.kill('SIGTERM');

    // The local sweeper runs at start (every 5 minutes in AWS).
    const second = await startServer(env, { dataDir: first.dataDir });
    servers.push(second);
    const job = await eventually(
      async () => (await api(second, key).get(`/jobs/${lost.id}`)).body,
      (body) => body.status === 'failed',
      { timeoutMs: 60_000 },
    );
    expect(job.error).toMatchObject({ code: 500 });
    const posts = await eventually(
      async () => receiver.at('/hooks/lost'),
      (received) => received.length > 0,
      { timeoutMs: 60_000 },
    );
    expect(posts.map((p) => p.headers['x-service-event'])).toEqual(['job.failed']);
    expect(JSON.parse(posts[0]!.body)).toMatchObject({ id: lost.id, status: 'failed' });
    const events = await eventually(
      async () => (await second.events()).filter((e) => e.detail?.job_id === lost.id),
      (found) => found.length > 0,
      { timeoutMs: 30_000 },
    );
    expect(events.map((e) => e['detail-type'])).toEqual(['job.failed']);
  }, 240_000);
});
