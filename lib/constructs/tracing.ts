import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';
import { acknowledge } from './acknowledge.ts';

/**
 * X-Ray for the service's functions and state machines.
 * - `off`: no traces (X-Ray bills each one recorded). Logs and metrics carry the job id and the errors.
 * - `sampled`: Lambda active tracing, which samples by Lambda's own fixed rule (the first request each
 *   second, then 5% of the rest: it cannot be configured), and traced state machines, which follow the
 *   account's X-Ray sampling rules (the default rule is the same). At a steady load well above one request
 *   a second that is about a twentieth of the requests; at a trickle it is every one.
 */
export type TracingMode = 'off' | 'sampled';

export const defaultTracing: TracingMode = 'off';

/**
 * What a function is built with in `mode`. Off, it has no TracingConfig, so its role gets no X-Ray grant,
 * and its code never imports the tracer (layers/aws/observability.ts reads POWERTOOLS_TRACE_ENABLED).
 */
export function functionTracing(mode: TracingMode): {
  tracing: lambda.Tracing | undefined;
  environment: { POWERTOOLS_TRACE_ENABLED: string };
} {
  const on = mode === 'sampled';
  return {
    tracing: on ? lambda.Tracing.ACTIVE : undefined,
    environment: { POWERTOOLS_TRACE_ENABLED: String(on) },
  };
}

/**
 * A state machine's `tracingEnabled` in `mode`: off, no TracingConfiguration (`false` would write one that
 * says disabled) and no X-Ray grant on its role.
 */
export const stateMachineTracing = (mode: TracingMode): true | undefined =>
  mode === 'sampled' ? true : undefined;

/** The cdk-nag findings of tracing left off on purpose, acknowledged on `scope` (the whole service). */
export function acknowledgeTracing(scope: IConstruct, mode: TracingMode): void {
  if (mode === 'sampled') return;
  const reason = 'X-Ray is off by choice (PhotoJobsProps.tracing): every trace is billed.';
  acknowledge(scope, {
    'AwsSolutions-SF2': reason,
    'Serverless-LambdaTracing': reason,
    'Serverless-StepFunctionStateMachineXray': reason,
  });
}
