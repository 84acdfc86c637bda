import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { telemetry } from '../../layers/core/telemetry-names.ts';
import { lastResortSettlement, throttleRetry, webhookRetry, workflow } from '../config.ts';
import { createVendedLogGroup } from './log-group.ts';

export interface JobWorkflowProps {
  /** Checks the job and marks it processing (functions/workflow/prepare-job). */
  prepareJob: lambda.IFunction;
  /** Runs the operation on the photo: the inference function. */
  runInference: lambda.IFunction;
  /** Records the outcome and settles the job's credits (functions/workflow/settle-job). */
  settleJob: lambda.IFunction;
  /** Publishes the job's event and delivers its webhook (functions/workflow/deliver-webhook). */
  deliverWebhook: lambda.IFunction;
  /** The state machine's name; fixed, so that the task functions know its ARN before it exists. */
  stateMachineName: string;
  /** Retries of a webhook delivery (`WebhookDeliveryError`); default `webhookRetry` in lib/config.ts. */
  webhookRetrySchedule?: WebhookRetrySchedule;
  /** Of the state machine's log group. Default one month. */
  logRetention?: logs.RetentionDays;
}

/** Full jitter: each wait is random between 0 and min(interval × backoffRate^(n-1), maxDelay). */
export interface WebhookRetrySchedule {
  /** The first wait's upper bound. */
  interval: Duration;
  /** Each further wait's bound is the previous one times this. */
  backoffRate: number;
  /** Retries after the first attempt. */
  maxAttempts: number;
  /** No wait's bound exceeds this. */
  maxDelay: Duration;
}

export const defaultWebhookRetrySchedule: WebhookRetrySchedule = {
  interval: Duration.seconds(webhookRetry.intervalSeconds),
  backoffRate: webhookRetry.backoffRate,
  maxAttempts: webhookRetry.maxAttempts,
  maxDelay: Duration.seconds(webhookRetry.maxDelaySeconds),
};

/**
 * One execution per job; its input is `{ "jobId": "..." }`.
 *
 * PrepareJob → RunInference → SettleSuccess → DeliverWebhook → JobSettled. Every error of the job's work,
 * SettleSuccess included, is caught into SettleFailure, which fails the job and releases its credits; if
 * that fails too, SettleLastResort keeps trying for hours, and only then does the execution fail. Every
 * task has a timeout, so the job's work is bounded (minutes) and a job cannot stay `processing`.
 * After settlement DeliverWebhook publishes the job's event and delivers the webhook, retried on
 * WebhookDeliveryError over hours; when the retries run out, MarkDeliveryFailed records that and the
 * execution still succeeds: the job's outcome does not depend on its receiver.
 *
 * Plain JSONPath states only (no JSONata, `Assign`, callbacks or Distributed Map): the local runner
 * executes this same definition.
 */
export class JobWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;
  /** Every state transition of every execution (without the states' data). */
  readonly logGroup: logs.ILogGroup;

  constructor(scope: Construct, id: string, props: JobWorkflowProps) {
    super(scope, id);

    const invoke = (
      stateId: string,
      fn: lambda.IFunction,
      options: Partial<tasks.LambdaInvokeProps>,
      transientRetry = true,
      firstRetry?: sfn.RetryProps,
    ) => {
      const task = new tasks.LambdaInvoke(this, stateId, {
        lambdaFunction: fn,
        payloadResponseOnly: true,
        // The retry below replaces the default one, which would also retry for six attempts.
        retryOnServiceExceptions: false,
        taskTimeout: sfn.Timeout.duration(Duration.seconds(workflow.taskTimeoutSeconds)),
        ...options,
      });
      // Before the transient retrier, which may name the same error: the first matching retrier is the one used.
      if (firstRetry) task.addRetry(firstRetry);
      if (!transientRetry) return task;
      task.addRetry({
        errors: [...workflow.retryErrors],
        interval: Duration.seconds(workflow.retryIntervalSeconds),
        maxAttempts: workflow.retryMaxAttempts,
        backoffRate: workflow.retryBackoffRate,
        jitterStrategy: sfn.JitterType.FULL,
      });
      return task;
    };

    const prepareJob = invoke('PrepareJob', props.prepareJob, {
      payload: sfn.TaskInput.fromObject({ jobId: sfn.JsonPath.stringAt('$.jobId') }),
      resultPath: '$.order',
    });
    // The order prepared above is the whole input of the inference function.
    const runInference = invoke(
      'RunInference',
      props.runInference,
      {
        inputPath: '$.order',
        resultPath: '$.result',
        taskTimeout: sfn.Timeout.duration(Duration.seconds(workflow.inferenceTaskTimeoutSeconds)),
      },
      true,
      {
        errors: [throttleRetry.error],
        interval: Duration.seconds(throttleRetry.intervalSeconds),
        maxAttempts: throttleRetry.maxAttempts,
        backoffRate: throttleRetry.backoffRate,
        maxDelay: Duration.seconds(throttleRetry.maxDelaySeconds),
        jitterStrategy: sfn.JitterType.FULL,
      },
    );
    const settleSuccess = invoke('SettleSuccess', props.settleJob, {
      payload: sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        outcome: 'success',
        result: sfn.JsonPath.objectAt('$.result'),
      }),
      resultPath: sfn.JsonPath.DISCARD,
    });
    const settleFailurePayload = sfn.TaskInput.fromObject({
      jobId: sfn.JsonPath.stringAt('$.jobId'),
      outcome: 'failure',
      failure: sfn.JsonPath.objectAt('$.failure'),
    });
    const settleFailure = invoke('SettleFailure', props.settleJob, {
      payload: settleFailurePayload,
      resultPath: sfn.JsonPath.DISCARD,
    });
    // The same settlement as SettleFailure (a repeated one changes nothing), retried on any error and for
    // longer: one retrier only, since the first retrier matching an error is the only one that counts.
    const settleLastResort = invoke(
      'SettleLastResort',
      props.settleJob,
      { payload: settleFailurePayload, resultPath: sfn.JsonPath.DISCARD },
      false,
    );
    settleLastResort.addRetry({
      errors: [sfn.Errors.ALL],
      interval: Duration.seconds(lastResortSettlement.intervalSeconds),
      maxAttempts: lastResortSettlement.maxAttempts,
      backoffRate: lastResortSettlement.backoffRate,
      maxDelay: Duration.seconds(lastResortSettlement.maxDelaySeconds),
      jitterStrategy: sfn.JitterType.FULL,
    });

    // The execution name tells this run of the job from a later one (after a retry of the job).
    const deliveryPayload = (final: boolean) =>
      sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        execution: sfn.JsonPath.stringAt('$$.Execution.Name'),
        ...(final ? { final: true } : {}),
      });
    const deliverWebhook = invoke('DeliverWebhook', props.deliverWebhook, {
      payload: deliveryPayload(false),
      resultPath: '$.webhook',
    });
    const schedule = props.webhookRetrySchedule ?? defaultWebhookRetrySchedule;
    deliverWebhook.addRetry({
      errors: [webhookRetry.error],
      interval: schedule.interval,
      maxAttempts: schedule.maxAttempts,
      backoffRate: schedule.backoffRate,
      maxDelay: schedule.maxDelay,
      jitterStrategy: sfn.JitterType.FULL,
    });
    const markDeliveryFailed = invoke(telemetry.logMatches.webhookGivenUp.state, props.deliverWebhook, {
      payload: deliveryPayload(true),
      resultPath: '$.webhook',
    });
    const settled = new sfn.Succeed(this, 'JobSettled');

    for (const task of [prepareJob, runInference, settleSuccess]) {
      task.addCatch(settleFailure, { errors: [sfn.Errors.ALL], resultPath: '$.failure' });
    }
    settleFailure.addCatch(settleLastResort, { errors: [sfn.Errors.ALL], resultPath: '$.settleError' });
    settleFailure.next(deliverWebhook);
    settleLastResort.next(deliverWebhook);
    deliverWebhook.addCatch(markDeliveryFailed, { errors: [sfn.Errors.ALL], resultPath: '$.webhookError' });
    // Bookkeeping of a delivery must not fail a settled job's execution.
    markDeliveryFailed.addCatch(settled, { errors: [sfn.Errors.ALL], resultPath: '$.webhookError' });
    markDeliveryFailed.next(settled);

    this.logGroup = createVendedLogGroup(this, 'Logs', props.logRetention);
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(
        prepareJob.next(runInference).next(settleSuccess).next(deliverWebhook).next(settled),
      ),
      timeout: Duration.hours(workflow.timeoutHours),
      tracingEnabled: true,
      logs: {
        destination: this.logGroup,
        // Every state transition, for the post-mortem of a stuck or failed job; without the states' data,
        // which carries webhook URLs (they may hold a receiver's token).
        level: sfn.LogLevel.ALL,
        includeExecutionData: false,
      },
    });
  }
}
