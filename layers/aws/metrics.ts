import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Job } from '#core/jobs/job.ts';
import type { WebhookSender } from '#core/ports.ts';
import { telemetry } from '#core/telemetry-names.ts';
import { isDelivered } from '#core/webhooks/delivery.ts';
import { logger } from './observability.ts';

/**
 * The service's metrics, as EMF lines through Powertools. Apart from ./observability.ts, which every
 * function imports: only the functions that record a metric load Powertools' metrics (about 15 ms of CPU
 * at a cold start, `npm run bench -- coldstart`).
 */
export const metrics = new Metrics({
  serviceName: telemetry.serviceName,
  namespace: telemetry.metricsNamespace,
});

/** One metric under its own dimensions, written at once as one EMF line. */
function put(
  name: string,
  unit: (typeof MetricUnit)[keyof typeof MetricUnit],
  value: number,
  dimensions: Record<string, string>,
): void {
  const single = metrics.singleMetric();
  single.addDimensions(dimensions);
  single.addMetric(name, unit, value);
}

export function recordJobCreated(job: Pick<Job, 'operation'>): void {
  put(telemetry.metrics.jobsCreated, MetricUnit.Count, 1, { operation: job.operation });
}

/** A settled job counts once, as succeeded or as failed with its code; other states count nothing. */
export function recordJobSettled(job: Pick<Job, 'operation' | 'status' | 'error'>): void {
  if (job.status === 'success') {
    put(telemetry.metrics.jobsSucceeded, MetricUnit.Count, 1, { operation: job.operation });
  } else if (job.status === 'failed') {
    put(telemetry.metrics.jobsFailed, MetricUnit.Count, 1, {
      operation: job.operation,
      code: String(job.error?.code ?? 500),
    });
  }
}

export function recordInferenceDuration(operation: string, milliseconds: number): void {
  put(telemetry.metrics.inferenceDuration, MetricUnit.Milliseconds, milliseconds, { operation });
}

/** A webhook sender that counts each attempt by its outcome, whichever use case sends it. */
export function countedWebhookSender(sender: WebhookSender): WebhookSender {
  return {
    async post(url, headers, body) {
      const result = await sender.post(url, headers, body);
      const outcome = isDelivered(result.statusCode) ? 'delivered' : 'failed';
      put(telemetry.metrics.webhookAttempts, MetricUnit.Count, 1, { outcome });
      logger.info('webhook attempt', {
        outcome,
        status_code: result.statusCode,
        latency_ms: result.latencyMs,
      });
      return result;
    },
  };
}
