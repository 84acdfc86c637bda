import type { LogItem } from '@aws-lambda-powertools/logger';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '#config';
import { JobCancelledError, ServiceError, WebhookDeliveryError } from '#core/errors.ts';
import { telemetry } from '#core/telemetry-names.ts';
import { onFirstCall } from './first-call.ts';

/**
 * Logs and traces of every function, through Powertools for AWS Lambda (metrics: ./metrics.ts). Outside Lambda the local
 * stack sets the switches: LOG_FORMAT=text prints one human line per entry on a terminal, metrics stay off
 * stdout, and the tracer is off (no X-Ray daemon is ever reached). The tracer and the X-Ray SDK under it are
 * imported only by a function whose tracing is on (POWERTOOLS_TRACE_ENABLED, set by the construct from
 * PhotoJobsProps.tracing): they were the largest part of every cold start (`npm run bench -- coldstart`).
 */

/** Attributes every line has, said by the line's own layout in text. */
const FRAME = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_name',
  'function_memory_size',
  'function_arn',
  'function_request_id',
  'request_id',
  'job_id',
  'batch_id',
]);

const textValue = (value: unknown): string =>
  typeof value === 'string' ? (/\s/.test(value) ? JSON.stringify(value) : value) : JSON.stringify(value);

/** One line a person reads: time, level, the job (or batch), the message, the rest as key=value. */
export function textLine(attributes: Record<string, unknown>): string {
  const time = String(attributes.timestamp ?? '').slice(11, 19);
  const level = String(attributes.level ?? '').padEnd(5);
  const subject = attributes.job_id ?? attributes.batch_id ?? '-';
  const rest = Object.entries(attributes)
    .filter(([key, value]) => !FRAME.has(key) && value !== undefined)
    .map(([key, value]) => {
      const error = value as { name?: string; message?: string; stack?: string } | null;
      if (key === 'error' && error && typeof error === 'object' && 'message' in error) {
        // A fault keeps its stack, indented under the line; an expected outcome never carries one.
        const head = `error=${textValue(`${error.name ?? 'Error'}: ${error.message}`)}`;
        return error.stack ? `${head}\n${error.stack.replace(/^/gm, '    ')}` : head;
      }
      return `${key}=${textValue(value)}`;
    });
  return [time, level, subject, attributes.message, ...rest].join(' ');
}

/** What Powertools keeps private (its typings) but a subclass must reach: see `PhotoJobsLogger`. */
interface ConsoleOwner {
  console: Console | undefined;
  setConsole(): void;
}
const makeConsole = (Logger.prototype as unknown as ConsoleOwner).setConsole;

/**
 * Powertools' logger; with LOG_FORMAT=text each entry is one human line instead of its JSON. Powertools
 * makes its Console at construction, opening stdout and stderr (4% of no-route's cold start where they are
 * pipes), though most requests print nothing: its own `setConsole` (POWERTOOLS_DEV's global console, the
 * `trace` patch) runs at the first JSON line instead. (Nor does the SDK open them: layers/node-process.cjs.)
 */
class PhotoJobsLogger extends Logger {
  #format: 'json' | 'text' | undefined;
  protected override printLog(logLevel: number, log: LogItem): void {
    // Read at the first line, not at import: the local stack sets the environment before any runs.
    this.#format ??= config().LOG_FORMAT;
    if (this.#format !== 'text') {
      const owner = this as unknown as ConsoleOwner;
      if (owner.console === undefined) makeConsole.call(owner);
      super.printLog(logLevel, log);
      return;
    }
    log.prepareForPrint();
    const attributes = log.getAttributes() as Record<string, unknown>;
    const line = textLine(attributes);
    const level = String(attributes.level);
    if (level === 'ERROR' || level === 'CRITICAL') console.error(line);
    else if (level === 'WARN') console.warn(line);
    else console.log(line);
  }
}

// Called by Powertools' constructor; the Console is made by `printLog` when first needed.
(PhotoJobsLogger.prototype as unknown as ConsoleOwner).setConsole = () => {};

export const logger = new PhotoJobsLogger({ serviceName: telemetry.serviceName });

/** The tracer, once a traced function's first invocation has loaded it; `undefined` while tracing is off. */
let tracer: Tracer | undefined;

/** Powertools' tracer middleware, imported and made on first use (once per cold start). */
const loadTracerMiddleware = onFirstCall(async (): Promise<MiddlewareObj> => {
  const { Tracer, captureLambdaHandler } = await import('./tracer-middleware.ts');
  tracer = new Tracer({ serviceName: telemetry.serviceName });
  return captureLambdaHandler(tracer, { captureResponse: false }) as MiddlewareObj;
});

/** Whether this process has loaded the tracer (never, where tracing is off). */
export const tracerLoaded = (): boolean => tracer !== undefined;

/**
 * A trace segment for the invocation where the function's tracing is on; where it is off, nothing, and
 * nothing imported.
 */
function traced<E>(): MiddlewareObj<E> {
  let inner: MiddlewareObj | undefined;
  return {
    before: async (request) => {
      if (!config().POWERTOOLS_TRACE_ENABLED) return;
      inner ??= await loadTracerMiddleware();
      await inner.before?.(request as never);
    },
    after: async (request) => {
      await inner?.after?.(request as never);
    },
    onError: async (request) => {
      await inner?.onError?.(request as never);
    },
  };
}

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
  if (tracer) for (const [key, value] of Object.entries(keys)) tracer.putAnnotation(key, value);
}

/**
 * The middlewares every handler starts with: a trace segment for the invocation, the Lambda context and
 * the event's correlation ids on each log line (cleared afterwards), and one log line for an error that
 * leaves the handler unanswered (an API error the http stack turned into a response is logged there).
 */
export function observability<E>(correlation: (event: E) => Correlation): MiddlewareObj<E>[] {
  return [
    traced<E>(),
    injectLambdaContext(logger, { resetKeys: true }) as MiddlewareObj<E>,
    {
      before: (request) => correlate(correlation(request.event)),
      onError: (request) => {
        if (request.response === undefined) logOutcome(request.error);
      },
    },
  ];
}

/**
 * An error that ends an invocation unanswered. What the service expects to happen (a photo without a plate,
 * a cancelled job, a retry to come) is an outcome, logged without a stack; only a fault is an ERROR.
 */
function logOutcome(error: unknown): void {
  if (error instanceof JobCancelledError) {
    logger.info('job not run', { reason: error.message });
  } else if (error instanceof ServiceError && error.expose && error.status < 500) {
    logger.warn('job outcome', { code: error.code, reason: `${error.name}: ${error.message}` });
  } else if (error instanceof ServiceError && error.status === 503) {
    logger.warn('transient failure, retried', { reason: `${error.name}: ${error.message}` });
  } else if (error instanceof WebhookDeliveryError) {
    // A receiver that is down or answers 500 is the receiver's outcome, retried on its schedule.
    logger.warn('webhook attempt failed, retried', { reason: error.message });
  } else {
    logger.error('invocation failed', error as Error);
  }
}

/** Correlation of an API request: its gateway request id and the job or batch its path names. */
export const httpCorrelation = (event: APIGatewayProxyEventV2): Correlation => ({
  requestId: event.requestContext?.requestId,
  jobId: event.pathParameters?.job_id,
  batchId: event.pathParameters?.batch_id,
});
