import { createHash, randomUUID } from 'node:crypto';
import type { JobStatus } from '../jobs/job.ts';

export const WEBHOOK_EVENTS = ['job.succeeded', 'job.failed', 'job.cancelled'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** EventBridge `source` of the job events. */
export const EVENT_SOURCE = 'photo-jobs';
export const USER_AGENT = 'photo-jobs-webhooks/1';
/** One attempt (connect, send, first byte of the answer) gives up after this long, unless configured. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export const HEADERS = {
  job: 'X-Service-Job',
  event: 'X-Service-Event',
  delivery: 'X-Service-Delivery',
  attempt: 'X-Service-Attempt',
} as const;

/** The event of a terminal status; null while the job still runs. */
export function eventNameOf(status: JobStatus): WebhookEventName | null {
  if (status === 'success') return 'job.succeeded';
  if (status === 'failed') return 'job.failed';
  if (status === 'cancelled') return 'job.cancelled';
  return null;
}

/** `workflow`: sent after settlement, retried on a schedule. `redeliver`: one attempt the owner asked for. */
type DeliveryTrigger = 'workflow' | 'redeliver';
type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One final job JSON on its way to one URL; its attempts share the id (`X-Service-Delivery`). */
export interface Delivery {
  deliveryId: string;
  jobId: string;
  ownerId: string;
  event: WebhookEventName;
  trigger: DeliveryTrigger;
  url: string;
  /** The exact bytes sent (and signed) on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryAttempt {
  deliveryId: string;
  jobId: string;
  /** 1-based within its delivery. */
  attempt: number;
  at: string;
  url: string;
  /** null when no HTTP answer came (timeout, refused address, connection error). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  outcome: 'delivered' | 'failed';
}

export const isDelivered = (statusCode: number | null): boolean =>
  statusCode !== null && statusCode >= 200 && statusCode < 300;

/**
 * Ids of what one workflow execution sends for a job: stable across the task's retries (so a retry never
 * publishes a second event or opens a second delivery), different for a later execution of the same job.
 */
export function workflowIdsOf(jobId: string, execution: string): { deliveryId: string; eventId: string } {
  const digest = createHash('sha256').update(`${jobId}\n${execution}`).digest('hex').slice(0, 32);
  return { deliveryId: `dlv_${digest}`, eventId: `evt_${digest}` };
}

export const newRedeliveryId = (): string => `dlv_${randomUUID().replaceAll('-', '')}`;

/**
 * The API key a job belongs to, whose secrets sign its deliveries. Guest sessions (`guest_…`) and the
 * master key (`master`) hold no key record, so their deliveries go out unsigned.
 */
export const signingKeyIdOf = (ownerId: string): string | null =>
  ownerId.startsWith('key_') ? ownerId : null;
