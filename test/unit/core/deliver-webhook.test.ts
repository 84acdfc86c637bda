import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, TransientError, WebhookDeliveryError } from '#core/errors.ts';
import { jobEnvelope } from '#core/jobs/envelope.ts';
import type { Job } from '#core/jobs/job.ts';
import type { EventPublisher, JobEvent, WebhookSecretRepository, WebhookSender } from '#core/ports.ts';
import { deliverJobWebhook, listJobDeliveries, redeliverWebhook } from '#core/use-cases/deliver-webhook.ts';
import { verifySignature, type WebhookSecret } from '#core/webhooks/signature.ts';
import { aJob } from './fixtures.ts';
import { memoryDeliveries, memoryStore } from './memory-ports.ts';

function setup(job: Job, answers: Array<number | null>) {
  const store = memoryStore({ key_1: 95 });
  store.stored.set(job.id, job);
  const secrets: WebhookSecret[] = [{ secret: 'whsec_k1', createdAt: '2026-01-01T00:00:00.000Z' }];
  const webhookSecrets: WebhookSecretRepository = {
    async get(keyId) {
      return keyId === 'key_1' ? { secrets, version: 1 } : { secrets: [], version: 0 };
    },
    async replace() {
      return false;
    },
  };
  const events: JobEvent[] = [];
  const publisher: EventPublisher = {
    async publish(event) {
      events.push(event);
    },
  };
  const sent: Array<{ url: string; headers: Record<string, string>; body: string }> = [];
  const webhooks: WebhookSender = {
    async post(url, headers, body) {
      sent.push({ url, headers, body });
      const statusCode = answers.length > 0 ? answers.shift()! : 200;
      return { statusCode, error: statusCode === null ? 'No answer within 10000 ms' : null, latencyMs: 12.4 };
    },
  };
  const deliveries = memoryDeliveries();
  const accounts = {
    async get(account: string) {
      return store.balances.get(account) ?? null;
    },
  };
  const deps = {
    jobs: store.jobs,
    accounts,
    deliveries,
    webhookSecrets,
    webhooks,
    events: publisher,
    clock: store.clock,
  };
  return { deps, events, sent, deliveries, store };
}

const finished = (overrides: Partial<Job> = {}) =>
  aJob({
    status: 'success',
    stage: 'done',
    finishedAt: '2026-11-22T07:59:00.000Z',
    params: { ...aJob().params, webhookUrl: 'https://hooks.example/jobs' },
    ...overrides,
  });
const input = { jobId: finished().id, execution: `${finished().id}-1` };
const keyCaller = { kind: 'key' as const, keyId: 'key_1', account: 'key_1', defaults: {} };

describe('deliverJobWebhook', () => {
  it('publishes the event once and delivers the final job JSON, signed, with the service headers', async () => {
    const { deps, events, sent } = setup(finished(), [200]);
    await expect(deliverJobWebhook(deps, input)).resolves.toEqual({
      jobId: input.jobId,
      webhook: 'delivered',
    });
    const body = JSON.stringify(
      jobEnvelope(finished(), { available: 95, reserved: 0, usedTotal: 0 }, deps.clock.now()),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toBe(body);
    expect(sent[0]!.headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Service-Job': input.jobId,
      'X-Service-Event': 'job.succeeded',
      'X-Service-Delivery': expect.stringMatching(/^dlv_[0-9a-f]{32}$/),
      'X-Service-Attempt': '1',
    });
    const now = Math.floor(deps.clock.now().getTime() / 1000);
    expect(
      verifySignature({
        header: sent[0]!.headers['X-Service-Signature'],
        body,
        secret: 'whsec_k1',
        nowSeconds: now,
      }),
    ).toBe(true);
    expect(events).toEqual([
      expect.objectContaining({
        event: 'job.succeeded',
        jobId: input.jobId,
        ownerId: 'key_1',
        status: 'success',
        occurredAt: '2026-11-22T07:59:00.000Z',
        job: JSON.parse(body),
      }),
    ]);
    // A repeated call (the task retried after a lost answer) neither publishes nor sends again.
    await expect(deliverJobWebhook(deps, input)).resolves.toEqual({
      jobId: input.jobId,
      webhook: 'delivered',
    });
    expect(events).toHaveLength(1);
    expect(sent).toHaveLength(1);
  });

  it('throws WebhookDeliveryError on a failed attempt, resends the same bytes, and logs every attempt', async () => {
    const { deps, events, sent } = setup(
      finished({ status: 'failed', error: { code: 803, message: 'no plate' } }),
      [500, null, 200],
    );
    await expect(deliverJobWebhook(deps, input)).rejects.toBeInstanceOf(WebhookDeliveryError);
    // The owner's balance moved meanwhile: the retry still sends the snapshot taken first.
    deps.accounts.get = async () => ({ available: 1, reserved: 0, usedTotal: 0 });
    await expect(deliverJobWebhook(deps, input)).rejects.toThrow(/No answer within/);
    await expect(deliverJobWebhook(deps, input)).resolves.toMatchObject({ webhook: 'delivered' });
    expect(new Set(sent.map((s) => s.body)).size).toBe(1);
    expect(new Set(sent.map((s) => s.headers['X-Service-Delivery'])).size).toBe(1);
    expect(sent.map((s) => s.headers['X-Service-Attempt'])).toEqual(['1', '2', '3']);
    expect(events.map((e) => e.event)).toEqual(['job.failed']);
    const log = await listJobDeliveries(deps, keyCaller, input.jobId);
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]).toMatchObject({
      status: 'delivered',
      trigger: 'workflow',
      event: 'job.failed',
    });
    expect(log.deliveries[0]!.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: 500,
        error: 'HTTP 500',
        outcome: 'failed',
        latency_ms: 12,
      }),
      expect.objectContaining({ attempt: 2, status_code: null, outcome: 'failed' }),
      expect.objectContaining({ attempt: 3, status_code: 200, error: null, outcome: 'delivered' }),
    ]);
  });

  it('marks the delivery failed after the last attempt and leaves the job alone', async () => {
    const job = finished();
    const { deps, sent, store } = setup(job, [500]);
    await expect(deliverJobWebhook(deps, input)).rejects.toBeInstanceOf(WebhookDeliveryError);
    await expect(deliverJobWebhook(deps, { ...input, final: true })).resolves.toMatchObject({
      webhook: 'failed',
    });
    expect(sent).toHaveLength(1);
    expect(store.stored.get(job.id)).toEqual(job);
    expect((await listJobDeliveries(deps, keyCaller, job.id)).deliveries[0]).toMatchObject({
      status: 'failed',
    });
  });

  it('delivers the webhook while the bus is down, and publishes on the retry without sending again', async () => {
    const { deps, events, sent } = setup(finished(), [200]);
    const publish = deps.events.publish;
    deps.events.publish = async () => {
      throw new TransientError('bus down');
    };
    await expect(deliverJobWebhook(deps, input)).rejects.toBeInstanceOf(TransientError);
    expect(sent).toHaveLength(1);
    deps.events.publish = publish;
    await expect(deliverJobWebhook(deps, input)).resolves.toMatchObject({ webhook: 'delivered' });
    expect(sent).toHaveLength(1);
    expect(events.map((e) => e.event)).toEqual(['job.succeeded']);
  });

  it('gives up on the event with the delivery after the last attempt, saying so', async () => {
    const { deps } = setup(finished(), [500]);
    deps.events.publish = async () => {
      throw new TransientError('bus down');
    };
    await expect(deliverJobWebhook(deps, input)).rejects.toBeInstanceOf(WebhookDeliveryError);
    await expect(deliverJobWebhook(deps, { ...input, final: true })).resolves.toEqual({
      jobId: input.jobId,
      webhook: 'failed',
      eventError: 'bus down',
    });
  });

  it('only publishes the event when there is no webhook URL', async () => {
    const { deps, events, sent } = setup(finished({ status: 'cancelled', params: aJob().params }), []);
    await expect(deliverJobWebhook(deps, input)).resolves.toEqual({ jobId: input.jobId, webhook: 'none' });
    expect(events.map((e) => e.event)).toEqual(['job.cancelled']);
    expect(sent).toEqual([]);
  });

  it('tells executions apart: a retried job publishes and delivers its new outcome too', async () => {
    const { deps, events, sent, store } = setup(finished({ status: 'failed' }), []);
    await deliverJobWebhook(deps, input);
    store.stored.set(input.jobId, finished({ retries: 1 }));
    await deliverJobWebhook(deps, { jobId: input.jobId, execution: `${input.jobId}-2` });
    expect(events.map((e) => e.event)).toEqual(['job.failed', 'job.succeeded']);
    expect(sent.map((s) => s.headers['X-Service-Event'])).toEqual(['job.failed', 'job.succeeded']);
  });

  it('sends unsigned for owners without a key (master key, guests) and skips a job not finished', async () => {
    const { deps, sent, events, store } = setup(finished({ ownerId: 'master', account: null }), []);
    await deliverJobWebhook(deps, input);
    expect(sent[0]!.headers['X-Service-Signature']).toBeUndefined();
    store.stored.set(input.jobId, finished({ status: 'processing' }));
    await expect(deliverJobWebhook(deps, { ...input, execution: 'other' })).resolves.toMatchObject({
      webhook: 'skipped',
    });
    expect(events).toHaveLength(1);
  });
});

describe('redeliverWebhook', () => {
  it('sends one signed attempt as a new delivery and returns it, delivered or not', async () => {
    const { deps, sent } = setup(finished(), [200, 200, 503]);
    await deliverJobWebhook(deps, input);
    const again = await redeliverWebhook(deps, keyCaller, input.jobId);
    expect(again).toMatchObject({
      trigger: 'redeliver',
      status: 'delivered',
      attempts: [expect.objectContaining({ attempt: 1, status_code: 200 })],
    });
    expect(again.delivery_id).not.toBe(sent[0]!.headers['X-Service-Delivery']);
    expect(sent[1]!.headers['X-Service-Signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    await expect(redeliverWebhook(deps, keyCaller, input.jobId)).resolves.toMatchObject({
      status: 'failed',
      attempts: [expect.objectContaining({ status_code: 503, outcome: 'failed' })],
    });
    expect((await listJobDeliveries(deps, keyCaller, input.jobId)).deliveries).toHaveLength(3);
  });

  it('answers 409 for a running job or one without a webhook, 404 for someone else’s job', async () => {
    const running = setup(finished({ status: 'processing' }), []);
    await expect(redeliverWebhook(running.deps, keyCaller, input.jobId)).rejects.toBeInstanceOf(
      ConflictError,
    );
    const noUrl = setup(finished({ params: aJob().params }), []);
    await expect(redeliverWebhook(noUrl.deps, keyCaller, input.jobId)).rejects.toBeInstanceOf(ConflictError);
    const other = { ...keyCaller, keyId: 'key_2', account: 'key_2' };
    await expect(redeliverWebhook(noUrl.deps, other, input.jobId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(listJobDeliveries(noUrl.deps, other, input.jobId)).rejects.toBeInstanceOf(NotFoundError);
  });
});
