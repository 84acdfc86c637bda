import { Aspects, type IAspect } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
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
 * Applies the mode to every function and state machine under `scope`, after they are made: one place,
 * instead of a setting threaded through every function's construction.
 */
export function applyTracing(scope: IConstruct, mode: TracingMode): void {
  if (mode === 'sampled') return; // what every function and state machine is built with
  Aspects.of(scope).add(new TracingOff());
  acknowledge(scope, {
    'AwsSolutions-SF2': 'X-Ray is off by choice (PhotoJobsProps.tracing): every trace is billed.',
    'Serverless-LambdaTracing': 'X-Ray is off by choice (PhotoJobsProps.tracing): every trace is billed.',
    'Serverless-StepFunctionStateMachineXray':
      'X-Ray is off by choice (PhotoJobsProps.tracing): every trace is billed.',
  });
}

class TracingOff implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof lambda.CfnFunction) node.tracingConfig = undefined;
    if (node instanceof sfn.CfnStateMachine) node.tracingConfiguration = undefined;
  }
}
