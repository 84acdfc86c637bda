import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamodbAccounts } from '#aws/dynamodb-accounts.ts';
import { hashSecret, keyIdOf } from '#core/keys/api-key.ts';
import { LOCAL_ADMIN_CREDENTIALS } from '../../../local/iam.ts';
import { LOCAL_TABLE, readRunningStack } from '../../../local/stack.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import {
  adminDynamo,
  api,
  photoForm,
  type RunningServer,
  startServer,
  untilWorkflowsIdle,
  WITHOUT_MODELS,
} from '../support/local-server.ts';
import { startReceiver } from '../support/webhook-receiver.ts';

/**
 * Express runs each step at least once: the local stand-in here runs every task of a job run twice, one run
 * after the other (LOCAL_SFN_REPEAT_EXPRESS_TASKS), and the test starts a finished job's run once more.
 * What a user could notice must not change: one charge, one event id per job, one delivery, the final state.
 */
describe('every step of a job run twice', () => {
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let client: ReturnType<typeof api>;
  const failing = new Set(['/hooks/down']);

  beforeAll(async () => {
    server = await startServer({
      ...WITHOUT_MODELS,
      LOCAL_SFN_REPEAT_EXPRESS_TASKS: 'true',
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      WEBHOOK_TIMEOUT_MS: '400',
    });
    receiver = await startReceiver(failing);
    key = await server.createKey(100);
    client = api(server, key);
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  const eventsOf = async (jobId: string) => (await server.events()).filter((e) => e.detail?.job_id === jobId);
  const runAgain = async (jobId: string) => {
    const endpoints = (await readRunningStack(server.dataDir))!;
    const sfn = new SFNClient({
      endpoint: endpoints.sfn,
      region: 'us-east-1',
      credentials: LOCAL_ADMIN_CREDENTIALS,
    });
    await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: endpoints.stateMachines[0],
        name: `${jobId}-1`,
        input: JSON.stringify({ jobId }),
      }),
    );
    sfn.destroy();
  };
  const ledgerOf = async () => {
    const dynamodb = await adminDynamo(server);
    const ledger = await dynamodbAccounts(dynamodb, LOCAL_TABLE).ledger(keyIdOf(hashSecret(key)));
    dynamodb.destroy();
    return ledger;
  };

  it('charges a success once, publishes and delivers job.succeeded under one id, and a later run changes nothing', async () => {
    const created = await client.postForm(
      '/jobs',
      photoForm(await markedPhoto(), { mode: 'plate', webhook_url: receiver.url('/hooks/ok') }),
    );
    expect(created.status).toBe(202);
    const jobId = created.body.id as string;
    const done = (await client.waitForJob(jobId)).body;
    expect(done.status).toBe('success');
    await untilWorkflowsIdle(server);

    const check = async () => {
      const events = await eventsOf(jobId);
      expect(new Set(events.map((e) => e.id)).size).toBe(1);
      expect(events.every((e) => e['detail-type'] === 'job.succeeded')).toBe(true);
      const posts = receiver.at('/hooks/ok');
      expect(posts.length).toBeGreaterThan(0);
      expect(new Set(posts.map((p) => p.headers['x-service-delivery'])).size).toBe(1);
      expect(new Set(posts.map((p) => p.headers['x-service-event']))).toEqual(new Set(['job.succeeded']));
      const ledger = (await ledgerOf()).filter((entry) => entry.jobId === jobId);
      expect(ledger.map((entry) => entry.kind).sort()).toEqual(['charge', 'reserve']);
      expect((await client.get(`/jobs/${jobId}/deliveries`)).body.deliveries).toHaveLength(1);
      expect((await client.get(`/jobs/${jobId}`)).body).toMatchObject({
        status: 'success',
        finished_at: done.finished_at,
      });
      return posts.length;
    };
    const posts = await check();

    await runAgain(jobId);
    await untilWorkflowsIdle(server);
    expect(await check()).toBe(posts);
    expect((await client.get('/quota')).body.quota.used_total).toBe(5);
  });

  it('releases a failure once, hands the webhook retries over once, and never turns the failure into a success', async () => {
    const created = await client.postForm(
      '/jobs',
      photoForm(await markedPhoto({ plate: false }), {
        mode: 'plate',
        webhook_url: receiver.url('/hooks/down'),
      }),
    );
    const jobId = created.body.id as string;
    const done = (await client.waitForJob(jobId)).body;
    expect(done.status).toBe('failed');
    // The run's attempt and then the follow-up's, all of one delivery, until the retries run out.
    await eventually(
      async () => (await client.get(`/jobs/${jobId}/deliveries`)).body.deliveries,
      (deliveries) => deliveries?.[0]?.status === 'failed',
    );
    await untilWorkflowsIdle(server);
    await runAgain(jobId);
    await untilWorkflowsIdle(server);

    const events = await eventsOf(jobId);
    expect(new Set(events.map((e) => e.id)).size).toBe(1);
    expect(events[0]?.['detail-type']).toBe('job.failed');
    const deliveries = (await client.get(`/jobs/${jobId}/deliveries`)).body.deliveries;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].status).toBe('failed');
    expect(new Set(receiver.at('/hooks/down').map((p) => p.headers['x-service-delivery'])).size).toBe(1);
    const ledger = (await ledgerOf()).filter((entry) => entry.jobId === jobId);
    expect(ledger.map((entry) => entry.kind).sort()).toEqual(['release', 'reserve']);
    expect((await client.get(`/jobs/${jobId}`)).body).toMatchObject({
      status: 'failed',
      finished_at: done.finished_at,
    });
  });
});
