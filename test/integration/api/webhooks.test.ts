import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSignatureHeader, verifySignature } from '#core/webhooks/signature.ts';
import { eventually } from '../../support/eventually.ts';
import { markedPhoto } from '../../support/marker-vision.ts';
import { api, photoForm, type RunningServer, startServer, WITHOUT_MODELS } from '../support/local-server.ts';

/** The subject here is the API: photos for the marker runner, with a plate (jobs succeed) and without (803). */
let PLATE_PHOTO: Buffer;
let NO_PLATE_PHOTO: Buffer;
/** Short attempts so that a receiver that never answers uses up all 8 attempts in a few seconds. */
const ATTEMPT_TIMEOUT_MS = 400;

type Behaviour = 'ok' | 'fail' | 'silent';
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw bytes, as a receiver must verify them. */
  body: string;
}

/** A webhook receiver on loopback: per path, a queue of answers (the last one repeats). */
async function startReceiver() {
  const plans = new Map<string, Behaviour[]>();
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '/';
      received.push({ path: url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const plan = plans.get(url) ?? ['ok'];
      const behaviour = plan.length > 1 ? plan.shift()! : plan[0]!;
      if (behaviour === 'silent') {
        hanging.add(res);
        return;
      }
      res.writeHead(behaviour === 'ok' ? 200 : 500, { 'content-type': 'text/plain' });
      res.end(behaviour === 'ok' ? 'thanks' : 'broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (pathname: string, ...plan: Behaviour[]) => {
      plans.set(pathname, plan.length > 0 ? plan : ['ok']);
      return `${base}${pathname}`;
    },
    plan: (pathname: string, ...plan: Behaviour[]) => plans.set(pathname, plan),
    at: (pathname: string) => received.filter((r) => r.path === pathname),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const header = (r: Received, name: string) => r.headers[name.toLowerCase()] as string | undefined;

describe('webhooks, delivery log and job events on the local server', () => {
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let secret: string;
  let client: ReturnType<typeof api>;
  let succeededJobId: string;
  let silentJobId: string;

  beforeAll(async () => {
    [PLATE_PHOTO, NO_PLATE_PHOTO] = await Promise.all([markedPhoto(), markedPhoto({ plate: false })]);
    server = await startServer({
      ...WITHOUT_MODELS,
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
    });
    receiver = await startReceiver();
    ({ key, webhookSecret: secret } = await server.createKeyWithSecret(100));
    client = api(server, key);
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  const deliveriesOf = (jobId: string, who = client) => who.get(`/jobs/${jobId}/deliveries`);
  const eventsOf = async (jobId: string) => (await server.events()).filter((e) => e.detail?.job_id === jobId);

  it('signs the final job JSON so the receiver can verify it, and puts job.succeeded on the bus', async () => {
    expect(secret).toMatch(/^whsec_/);
    const hook = receiver.url('/hooks/succeeded');
    const created = await client.postForm(
      '/jobs',
      photoForm(PLATE_PHOTO, { mode: 'plate', webhook_url: hook }),
    );
    expect(created.status).toBe(202);
    succeededJobId = created.body.id;
    const [delivery] = await eventually(
      async () => receiver.at('/hooks/succeeded'),
      (list) => list.length > 0,
    );
    expect(delivery).toBeDefined();
    const polled = await client.waitForJob(succeededJobId);
    expect(polled.body.status).toBe('success');

    expect(
      verifySignature({ header: header(delivery!, 'X-Service-Signature'), body: delivery!.body, secret }),
    ).toBe(true);
    expect(
      verifySignature({
        header: header(delivery!, 'X-Service-Signature'),
        body: delivery!.body,
        secret: 'whsec_x',
      }),
    ).toBe(false);
    expect(JSON.parse(delivery!.body)).toEqual(polled.body);
    expect(delivery!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': expect.stringMatching(/^photo-jobs-webhooks\//),
      'x-service-job': succeededJobId,
      'x-service-event': 'job.succeeded',
      'x-service-delivery': expect.stringMatching(/^dlv_/),
      'x-service-attempt': '1',
    });

    const log = await eventually(
      () => deliveriesOf(succeededJobId),
      (r) => r.body.deliveries?.[0]?.status === 'delivered',
    );
    expect(log.status).toBe(200);
    expect(log.body).toMatchObject({ job_id: succeededJobId, webhook_url: hook });
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({
        delivery_id: header(delivery!, 'X-Service-Delivery'),
        event: 'job.succeeded',
        trigger: 'workflow',
        status: 'delivered',
        attempts: [
          expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'delivered', error: null }),
        ],
      }),
    ]);
    expect(log.body.deliveries[0].attempts[0].latency_ms).toEqual(expect.any(Number));

    const events = await eventually(
      () => eventsOf(succeededJobId),
      (list) => list.length > 0,
    );
    expect(events).toEqual([
      expect.objectContaining({
        source: 'photo-jobs',
        'detail-type': 'job.succeeded',
        detail: expect.objectContaining({
          event: 'job.succeeded',
          job_id: succeededJobId,
          status: 'success',
          job: expect.objectContaining({ id: succeededJobId, status: 'success', result: true }),
        }),
      }),
    ]);
  });

  it('retries a receiver that answers 500 and logs both attempts; a failed job publishes job.failed', async () => {
    const hook = receiver.url('/hooks/flaky', 'fail', 'ok');
    const created = await client.postForm(
      '/jobs',
      photoForm(NO_PLATE_PHOTO, { mode: 'plate', webhook_url: hook }),
    );
    const done = await client.waitForJob(created.body.id);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 803 } });

    const log = await eventually(
      () => deliveriesOf(created.body.id),
      (r) => r.body.deliveries?.[0]?.status === 'delivered',
    );
    expect(log.body.deliveries).toHaveLength(1);
    expect(log.body.deliveries[0]).toMatchObject({ event: 'job.failed', status: 'delivered' });
    expect(log.body.deliveries[0].attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 500, outcome: 'failed', error: 'HTTP 500' }),
      expect.objectContaining({ attempt: 2, status_code: 200, outcome: 'delivered' }),
    ]);

    const requests = receiver.at('/hooks/flaky');
    expect(requests).toHaveLength(2);
    expect(requests.map((r) => header(r, 'X-Service-Attempt'))).toEqual(['1', '2']);
    expect(new Set(requests.map((r) => header(r, 'X-Service-Delivery'))).size).toBe(1);
    expect(requests[1]!.body).toBe(requests[0]!.body);
    for (const r of requests) {
      expect(verifySignature({ header: header(r, 'X-Service-Signature'), body: r.body, secret })).toBe(true);
    }
    const events = await eventually(
      () => eventsOf(created.body.id),
      (list) => list.length > 0,
    );
    expect(events.map((e) => e['detail-type'])).toEqual(['job.failed']);
  });

  it('gives up on a receiver that never answers: the delivery fails, the job stays a success', async () => {
    const hook = receiver.url('/hooks/silent', 'silent');
    const created = await client.postForm(
      '/jobs',
      photoForm(PLATE_PHOTO, { mode: 'plate', webhook_url: hook }),
    );
    silentJobId = created.body.id;
    const done = await client.waitForJob(silentJobId);
    expect(done.body.status).toBe('success');

    const log = await eventually(
      () => deliveriesOf(silentJobId),
      (r) => r.body.deliveries?.[0]?.status === 'failed',
    );
    expect(log.body.deliveries).toHaveLength(1);
    const [delivery] = log.body.deliveries;
    expect(delivery.status).toBe('failed');
    // The first attempt and the 7 retries of the published schedule, each cut off by the attempt timeout.
    expect(delivery.attempts).toHaveLength(8);
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ status_code: null, outcome: 'failed' });
      expect(attempt.error).toMatch(new RegExp(`No answer within ${ATTEMPT_TIMEOUT_MS} ms`));
      expect(attempt.latency_ms).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 50);
    }
    expect(receiver.at('/hooks/silent')).toHaveLength(8);

    const after = await client.get(`/jobs/${silentJobId}`);
    expect(after.body).toEqual(done.body);
    expect((await eventsOf(silentJobId)).map((e) => e['detail-type'])).toEqual(['job.succeeded']);
  });

  it('redelivers on request: one signed attempt, logged as a new delivery', async () => {
    receiver.plan('/hooks/silent', 'ok');
    const redelivered = await client.postJson(`/jobs/${silentJobId}/deliveries/redeliver`, {});
    expect(redelivered.status).toBe(200);
    expect(redelivered.body).toMatchObject({
      trigger: 'redeliver',
      event: 'job.succeeded',
      status: 'delivered',
      attempts: [expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'delivered' })],
    });
    const last = receiver.at('/hooks/silent').at(-1)!;
    expect(header(last, 'X-Service-Delivery')).toBe(redelivered.body.delivery_id);
    expect(verifySignature({ header: header(last, 'X-Service-Signature'), body: last.body, secret })).toBe(
      true,
    );
    expect(JSON.parse(last.body)).toEqual((await client.get(`/jobs/${silentJobId}`)).body);

    const log = await deliveriesOf(silentJobId);
    expect(
      log.body.deliveries.map((d: { trigger: string; status: string }) => [d.trigger, d.status]),
    ).toEqual([
      ['redeliver', 'delivered'],
      ['workflow', 'failed'],
    ]);
    // Redelivery sends; it does not publish the event a second time.
    expect(await eventsOf(silentJobId)).toHaveLength(1);
  });

  it('keeps the log and redelivery to the owner (404) and refuses jobs without a webhook or not finished (409)', async () => {
    const stranger = api(server, await server.createKey(10));
    expect((await deliveriesOf(silentJobId, stranger)).status).toBe(404);
    expect((await stranger.postJson(`/jobs/${silentJobId}/deliveries/redeliver`, {})).status).toBe(404);

    // A terminal job without a webhook: cancelled, or, where its run (fast without X-Ray) ends it first,
    // failed (no plate). Either way it is announced once, by its own event.
    const created = await client.postForm('/jobs', photoForm(NO_PLATE_PHOTO, { mode: 'plate' }));
    const [early, cancel] = await Promise.all([
      client.postJson(`/jobs/${created.body.id}/deliveries/redeliver`, {}),
      client.postJson(`/jobs/${created.body.id}/cancel`, {}),
    ]);
    expect(early.status).toBe(409);
    const ended = await client.waitForJob(created.body.id);
    // A cancel requested while the run fails the job may come too late to change its end.
    expect(['cancelled', 'failed']).toContain(ended.body.status);
    if (cancel.status === 409) expect(ended.body.status).toBe('failed');
    const noHook = await client.postJson(`/jobs/${created.body.id}/deliveries/redeliver`, {});
    expect(noHook.status).toBe(409);
    expect(noHook.body.message).toMatch(/no webhook/);
    expect((await deliveriesOf(created.body.id)).body).toEqual({
      job_id: created.body.id,
      webhook_url: null,
      deliveries: [],
    });
    const events = await eventually(
      () => eventsOf(created.body.id),
      (list) => list.length > 0,
    );
    expect(events.map((e) => e['detail-type'])).toEqual([`job.${ended.body.status}`]);
  });

  it('after a rotation signs with both secrets until the overlap ends', async () => {
    const rotated = await server.cli(['keys', 'rotate-webhook-secret', key, '--json']);
    expect(rotated).toMatchObject({
      webhook_secret: expect.stringMatching(/^whsec_/),
      previous_expires_at: expect.any(String),
    });
    expect(Date.parse(rotated.previous_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(rotated.webhook_secret).not.toBe(secret);

    const again = await client.postJson(`/jobs/${succeededJobId}/deliveries/redeliver`, {});
    expect(again.body.status).toBe('delivered');
    const last = receiver.at('/hooks/succeeded').at(-1)!;
    const signature = header(last, 'X-Service-Signature');
    expect(parseSignatureHeader(signature!).signatures).toHaveLength(2);
    for (const candidate of [rotated.webhook_secret, secret]) {
      expect(verifySignature({ header: signature, body: last.body, secret: candidate })).toBe(true);
    }
  });

  it('delivers master-key jobs unsigned: there is no key secret to sign them with', async () => {
    const master = api(server, server.masterKey);
    const hook = receiver.url('/hooks/master');
    const created = await master.postForm(
      '/jobs',
      photoForm(NO_PLATE_PHOTO, { mode: 'plate', webhook_url: hook }),
    );
    const [delivery] = await eventually(
      async () => receiver.at('/hooks/master'),
      (list) => list.length > 0,
    );
    expect(delivery!.headers).toMatchObject({
      'x-service-job': created.body.id,
      'x-service-event': 'job.failed',
    });
    expect(header(delivery!, 'X-Service-Signature')).toBeUndefined();
  });
});
