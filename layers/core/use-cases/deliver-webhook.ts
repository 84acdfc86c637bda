import { ConflictError, WebhookDeliveryError } from '../errors.ts';
import { jobEnvelope } from '../jobs/envelope.ts';
import type { Job } from '../jobs/job.ts';
import type { Caller } from '../keys/caller.ts';
import type {
  AccountRepository,
  Clock,
  DeliveryRepository,
  EventPublisher,
  JobRepository,
  WebhookSecretRepository,
  WebhookSender,
} from '../ports.ts';
import {
  type Delivery,
  type DeliveryAttempt,
  eventNameOf,
  HEADERS,
  isDelivered,
  newRedeliveryId,
  signingKeyIdOf,
  USER_AGENT,
  type WebhookEventName,
  workflowIdsOf,
} from '../webhooks/delivery.ts';
import { SIGNATURE_HEADER, signatureHeader, signingSecrets } from '../webhooks/signature.ts';
import { getOwnJob } from './get-job.ts';

export interface WebhookDeps {
  jobs: JobRepository;
  accounts: Pick<AccountRepository, 'get'>;
  deliveries: DeliveryRepository;
  webhookSecrets: WebhookSecretRepository;
  webhooks: WebhookSender;
  clock: Clock;
}

export interface DeliverWebhookDeps extends WebhookDeps {
  events: EventPublisher;
}

/** Input of the workflow step: `execution` is the execution's name, so each run of a job is told apart. */
export interface DeliverWebhookInput {
  jobId: string;
  execution: string;
  /** Set by the step after the retries ran out: record the delivery as failed, send nothing. */
  final?: boolean;
}

export interface DeliverWebhookOutcome {
  jobId: string;
  webhook: 'none' | 'skipped' | Delivery['status'];
  /** Set when the event could not be published by the last call (it stays in the execution's history). */
  eventError?: string;
}

/**
 * Workflow step after settlement: publish the job's terminal event once and deliver its final job JSON.
 * 1. The first call of an execution takes a snapshot of the final job JSON; every retry sends those bytes.
 * 2. The terminal event goes to the bus unless this execution published it already.
 * 3. Without a webhook URL that is all. A delivery already delivered or failed is left alone.
 * 4. One attempt: sign, POST, log. A 2xx marks it delivered; anything else throws WebhookDeliveryError,
 *    which the state machine retries on its schedule.
 * 5. With `final` (the retries ran out) the delivery is marked failed; the job is not touched.
 */
export async function deliverJobWebhook(
  deps: DeliverWebhookDeps,
  input: DeliverWebhookInput,
): Promise<DeliverWebhookOutcome> {
  const { deliveryId, eventId } = workflowIdsOf(input.jobId, input.execution);
  let delivery = await deps.deliveries.get(input.jobId, deliveryId);
  let snapshot: { event: WebhookEventName; body: string; ownerId: string; status: string } | null = delivery
    ? {
        event: delivery.event,
        body: delivery.body,
        ownerId: delivery.ownerId,
        status: statusOf(delivery.event),
      }
    : null;
  let job: Job | null = null;
  if (!snapshot) {
    job = await deps.jobs.get(input.jobId);
    // Only a settled job has something to tell; a job retried in the meantime tells it in its own run.
    const event = job ? eventNameOf(job.status) : null;
    if (!job || !event) return { jobId: input.jobId, webhook: 'skipped' };
    snapshot = { event, body: await finalJobJson(deps, job), ownerId: job.ownerId, status: job.status };
    if (job.params.webhookUrl) {
      const now = deps.clock.now().toISOString();
      delivery = await deps.deliveries.open({
        deliveryId,
        jobId: job.id,
        ownerId: job.ownerId,
        event,
        trigger: 'workflow',
        url: job.params.webhookUrl,
        body: snapshot.body,
        status: 'pending',
        attempts: 0,
        createdAt: now,
        updatedAt: now,
      });
      snapshot.body = delivery.body;
    }
  }

  // A bus that is down must not hold the webhook back: the delivery goes on, and the step fails afterwards
  // so that its retry publishes again (a delivered webhook is not sent twice).
  let unpublished: unknown = null;
  if (!(await deps.deliveries.wasPublished(input.jobId, eventId))) {
    try {
      await deps.events.publish({
        eventId,
        event: snapshot.event,
        jobId: input.jobId,
        ownerId: snapshot.ownerId,
        status: snapshot.status,
        occurredAt: finishedAtOf(snapshot.body) ?? deps.clock.now().toISOString(),
        job: JSON.parse(snapshot.body),
      });
      await deps.deliveries.markPublished(input.jobId, eventId, deps.clock.now().toISOString());
    } catch (error) {
      unpublished = error;
    }
  }

  let outcome: DeliverWebhookOutcome['webhook'] = delivery ? delivery.status : 'none';
  if (delivery?.status === 'pending') {
    if (input.final) {
      await deps.deliveries.finish(input.jobId, deliveryId, 'failed', deps.clock.now().toISOString());
      outcome = 'failed';
    } else {
      const attempt = await sendAttempt(deps, delivery);
      if (attempt.outcome === 'failed') {
        throw new WebhookDeliveryError(
          `Attempt ${attempt.attempt} to deliver ${delivery.deliveryId} failed: ${attempt.error}`,
          { cause: unpublished ?? undefined },
        );
      }
      outcome = 'delivered';
    }
  }
  if (!unpublished) return { jobId: input.jobId, webhook: outcome };
  if (!input.final) throw unpublished;
  // After the last attempt the event is given up on too; the execution's output keeps why.
  return {
    jobId: input.jobId,
    webhook: outcome,
    eventError: String((unpublished as Error).message ?? unpublished),
  };
}

/**
 * Send a finished job's final JSON to its webhook once more, now (the owner asked for it).
 * 1. The job must be the caller's (404 otherwise), finished, and have a webhook URL (409 otherwise).
 * 2. A new delivery with one attempt, signed and logged like the automatic ones; it is returned either way.
 */
export async function redeliverWebhook(deps: WebhookDeps, caller: Caller, jobId: string) {
  const job = await getOwnJob(deps, caller, jobId);
  const event = eventNameOf(job.status);
  if (!event)
    throw new ConflictError(`Job ${jobId} is ${job.status}; only a finished job can be redelivered`);
  if (!job.params.webhookUrl) throw new ConflictError(`Job ${jobId} has no webhook URL to deliver to`);
  const now = deps.clock.now().toISOString();
  const delivery = await deps.deliveries.open({
    deliveryId: newRedeliveryId(),
    jobId,
    ownerId: job.ownerId,
    event,
    trigger: 'redeliver',
    url: job.params.webhookUrl,
    body: await finalJobJson(deps, job),
    status: 'pending',
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  });
  const attempt = await sendAttempt(deps, delivery);
  if (attempt.outcome === 'failed') {
    await deps.deliveries.finish(jobId, delivery.deliveryId, 'failed', deps.clock.now().toISOString());
  }
  const status = attempt.outcome === 'delivered' ? 'delivered' : 'failed';
  return deliveryView({ ...delivery, status, attempts: 1, updatedAt: attempt.at }, [attempt]);
}

/** The delivery log of a job its caller may see (404 otherwise): every delivery with its attempts. */
export async function listJobDeliveries(
  deps: { jobs: JobRepository; deliveries: DeliveryRepository },
  caller: Caller,
  jobId: string,
) {
  const job = await getOwnJob(deps, caller, jobId);
  const deliveries = await deps.deliveries.list(jobId);
  return {
    job_id: job.id,
    webhook_url: job.params.webhookUrl,
    deliveries: deliveries.map(({ delivery, attempts }) => deliveryView(delivery, attempts)),
  };
}

/** One attempt: headers and signature made now, the POST, and its line in the log. */
async function sendAttempt(deps: WebhookDeps, delivery: Delivery): Promise<DeliveryAttempt> {
  const attempt = await deps.deliveries.nextAttempt(
    delivery.jobId,
    delivery.deliveryId,
    deps.clock.now().toISOString(),
  );
  const now = deps.clock.now();
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [HEADERS.job]: delivery.jobId,
    [HEADERS.event]: delivery.event,
    [HEADERS.delivery]: delivery.deliveryId,
    [HEADERS.attempt]: String(attempt),
  };
  const keyId = signingKeyIdOf(delivery.ownerId);
  const secrets = keyId ? signingSecrets((await deps.webhookSecrets.get(keyId)).secrets, now) : [];
  if (secrets.length > 0) {
    headers[SIGNATURE_HEADER] = signatureHeader(secrets, Math.floor(now.getTime() / 1000), delivery.body);
  }
  const result = await deps.webhooks.post(delivery.url, headers, delivery.body);
  const entry: DeliveryAttempt = {
    deliveryId: delivery.deliveryId,
    jobId: delivery.jobId,
    attempt,
    at: now.toISOString(),
    url: delivery.url,
    statusCode: result.statusCode,
    latencyMs: Math.round(result.latencyMs),
    error: result.error ?? (isDelivered(result.statusCode) ? null : `HTTP ${result.statusCode}`),
    outcome: isDelivered(result.statusCode) ? 'delivered' : 'failed',
  };
  await deps.deliveries.record(entry);
  if (entry.outcome === 'delivered') {
    await deps.deliveries.finish(delivery.jobId, delivery.deliveryId, 'delivered', entry.at);
  }
  return entry;
}

/** Exactly what `GET /jobs/{job_id}` answers for the job, with the payer's balance of now. */
async function finalJobJson(
  deps: { accounts: Pick<AccountRepository, 'get'>; clock: Clock },
  job: Job,
): Promise<string> {
  const account = job.account ? await deps.accounts.get(job.account) : null;
  return JSON.stringify(jobEnvelope(job, account, deps.clock.now()));
}

const statusOf = (event: WebhookEventName): string =>
  event === 'job.succeeded' ? 'success' : event === 'job.failed' ? 'failed' : 'cancelled';

function finishedAtOf(body: string): string | null {
  const finished = (JSON.parse(body) as { finished_at?: unknown }).finished_at;
  return typeof finished === 'string' ? finished : null;
}

function deliveryView(delivery: Delivery, attempts: DeliveryAttempt[]) {
  return {
    delivery_id: delivery.deliveryId,
    event: delivery.event,
    trigger: delivery.trigger,
    url: delivery.url,
    status: delivery.status,
    created_at: delivery.createdAt,
    updated_at: delivery.updatedAt,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at,
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      error: a.error,
      outcome: a.outcome,
    })),
  };
}
