import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Job } from '#core/jobs/job.ts';
import type { WebhookSender } from '#core/ports.ts';
import { telemetry } from '#core/telemetry-names.ts';
import { isDelivered } from '#core/webhooks/delivery.ts';

/**
 * Logs, metrics and traces of every function, through Powertools for AWS Lambda. What each one does outside
 * Lambda is Powertools' own environment switch, set by the local stack: POWERTOOLS_DEV pretty-prints the
 * logs and keeps metrics off stdout, and the tracer is off wherever no Lambda runtime is (no X-Ray daemon is
 * ever reached).
 */
export const logger = new Logger({ serviceName: telemetry.serviceName });
export const metrics = new Metrics({
  serviceName: telemetry.serviceName,
  namespace: telemetry.metricsNamespace,
});
export const tracer = new Tracer({ serviceName: telemetry.serviceName });

/** What ties a log line to a job, a batch and a request. */
export interface Correlation {
  jobId?: string;
  batchId?: string;
  /** API Gateway's request id (the one in its access log); Lambda's own is `function_request_id`. */
  requestId?: string;
}

const keysOf = ({ jobId, batchId, requestId }: Correlation) => ({
  ...(jobId ? { job_id: jobId } : {}),
  ...(batchId ? { batch_id: batchId } : {}),
  ...(requestId ? { request_id: requestId } : {}),
});

/** Adds correlation ids to every later log line of this invocation, and to its trace as annotations. */
export function correlate(ids: Correlation): void {
  const keys = keysOf(ids);
  logger.appendKeys(keys);
  for (const [key, value] of Object.entries(keys)) tracer.putAnnotation(key, value);
}

/**
 * The middlewares every handler starts with: a trace segment for the invocation, the Lambda context and
 * the event's correlation ids on each log line (cleared afterwards), and one log line for an error that
 * leaves the handler unanswered (an API error the http stack turned into a response is logged there).
 */
export function observability<E>(correlation: (event: E) => Correlation): MiddlewareObj<E>[] {
  return [
    captureLambdaHandler(tracer, { captureResponse: false }) as MiddlewareObj<E>,
    injectLambdaContext(logger, { resetKeys: true }) as MiddlewareObj<E>,
    {
      before: (request) => correlate(correlation(request.event)),
      onError: (request) => {
        if (request.response === undefined) logger.error('invocation failed', request.error as Error);
      },
    },
  ];
}

/** Correlation of an API request: its gateway request id and the job or batch its path names. */
export const httpCorrelation = (event: APIGatewayProxyEventV2): Correlation => ({
  requestId: event.requestContext?.requestId,
  jobId: event.pathParameters?.job_id,
  batchId: event.pathParameters?.batch_id,
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
