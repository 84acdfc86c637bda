import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { FOLLOW_UP_SUFFIX } from '../../layers/core/jobs/ids.ts';
import { telemetry } from '../../layers/core/telemetry-names.ts';
import { expressThrottleRetry, lastResortSettlement, webhookRetry, workflow } from '../config.ts';
import { acknowledge } from './acknowledge.ts';
import { createVendedLogGroup } from './log-group.ts';
import { stateMachineTracing, type TracingMode } from './tracing.ts';

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
  /** The name of the Standard machine that takes a job over for the long waits. */
  followUpStateMachineName: string;
  /** Retries of a webhook delivery (`WebhookDeliveryError`); default `webhookRetry` in lib/config.ts. */
  webhookRetrySchedule?: WebhookRetrySchedule;
  /** Of the state machine's log group. Default one month. */
  logRetention?: logs.RetentionDays;
  tracing: TracingMode;
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

const defaultWebhookRetrySchedule: WebhookRetrySchedule = {
  interval: Duration.seconds(webhookRetry.intervalSeconds),
  backoffRate: webhookRetry.backoffRate,
  maxAttempts: webhookRetry.maxAttempts,
  maxDelay: Duration.seconds(webhookRetry.maxDelaySeconds),
};

/**
 * Two machines. The job's run is an Express execution (billed per run and its few seconds, not per state
 * transition); the rare long waits are a Standard one that it hands the job to, and that runs only then.
 *
 * Jobs (Express, input `{ "jobId": "..." }`, named `{jobId}-{attempt}`):
 * PrepareJob → RunInference → SettleSuccess → DeliverWebhook (one attempt) → JobSettled. Every error of the
 * job's work, SettleSuccess included, is caught into SettleFailure, which fails the job and releases its
 * credits. Throttling of the inference function is waited out for about two minutes at most, so that the
 * run stays inside Express's five minutes.
 * When SettleFailure fails, or the webhook's first attempt does, HandOff starts the follow-up named after
 * the execution (`{execution}-follow-up`) and the run ends. Express runs at least once and does not
 * de-duplicate starts by name: a second run of the same attempt does its steps again (each one leaves a
 * repeated call without effect) and its HandOff finds the follow-up's name taken, which ends it too.
 *
 * Follow-ups (Standard, input `{ jobId, execution, failure? }`): with a `failure`, SettleLastResort tries
 * the failure's settlement for hours on any error; then the webhook is retried on its schedule (the first
 * wait a Wait state, the rest the retrier), and MarkDeliveryFailed records when the retries ran out. The
 * job's outcome never depends on its receiver.
 *
 * Plain JSONPath states only (no JSONata, `Assign`, callbacks or Distributed Map): the local runner
 * executes these same definitions.
 */
export class JobWorkflow extends Construct {
  /** The Express machine every job runs on. */
  readonly stateMachine: sfn.StateMachine;
  /** The Standard machine a job is handed to for a late settlement or webhook retries. */
  readonly followUps: sfn.StateMachine;
  /** Every state transition of every execution of both machines (without the states' data). */
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

    // The long waits: a Standard machine, run only for the jobs that need one.
    const failurePayload = sfn.TaskInput.fromObject({
      jobId: sfn.JsonPath.stringAt('$.jobId'),
      outcome: 'failure',
      failure: sfn.JsonPath.objectAt('$.failure'),
    });
    // The same settlement as SettleFailure (a repeated one changes nothing), retried on any error and for
    // longer: one retrier only, since the first retrier matching an error is the only one that counts.
    const settleLastResort = invoke(
      'SettleLastResort',
      props.settleJob,
      { payload: failurePayload, resultPath: sfn.JsonPath.DISCARD },
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
    // `execution` is the job run's name ({jobId}-{attempt}): the delivery and event ids are made from it, so
    // the follow-up continues the run's delivery rather than starting another.
    const deliveryPayload = (final: boolean) =>
      sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        execution: sfn.JsonPath.stringAt('$.execution'),
        ...(final ? { final: true } : {}),
      });
    const schedule = props.webhookRetrySchedule ?? defaultWebhookRetrySchedule;
    // The job run made the first attempt; the schedule's first wait is this state's, unjittered.
    const waitToRetry = new sfn.Wait(this, 'WaitToRetryWebhook', {
      time: sfn.WaitTime.duration(schedule.interval),
    });
    const retryWebhook = invoke('RetryWebhook', props.deliverWebhook, {
      payload: deliveryPayload(false),
      resultPath: '$.webhook',
    });
    if (schedule.maxAttempts > 1) {
      retryWebhook.addRetry({
        errors: [webhookRetry.error],
        interval: Duration.seconds(
          Math.min(schedule.interval.toSeconds() * schedule.backoffRate, schedule.maxDelay.toSeconds()),
        ),
        maxAttempts: schedule.maxAttempts - 1,
        backoffRate: schedule.backoffRate,
        maxDelay: schedule.maxDelay,
        jitterStrategy: sfn.JitterType.FULL,
      });
    }
    const markDeliveryFailed = invoke(telemetry.logMatches.webhookGivenUp.state, props.deliverWebhook, {
      payload: deliveryPayload(true),
      resultPath: '$.webhook',
    });
    const followedUp = new sfn.Succeed(this, 'FollowedUp');
    retryWebhook.addCatch(markDeliveryFailed, { errors: [sfn.Errors.ALL], resultPath: '$.webhookError' });
    // Bookkeeping of a delivery must not fail a settled job's follow-up.
    markDeliveryFailed.addCatch(followedUp, { errors: [sfn.Errors.ALL], resultPath: '$.webhookError' });
    markDeliveryFailed.next(followedUp);
    const webhookRetries = schedule.maxAttempts > 0 ? waitToRetry.next(retryWebhook) : markDeliveryFailed;
    retryWebhook.next(followedUp);
    settleLastResort.next(webhookRetries);
    const route = new sfn.Choice(this, 'FollowUp')
      .when(sfn.Condition.isPresent('$.failure'), settleLastResort)
      .otherwise(webhookRetries);

    this.logGroup = createVendedLogGroup(this, 'Logs', props.logRetention);
    // Without the states' data, which carries webhook URLs (they may hold a receiver's token).
    const logging = (level: sfn.LogLevel): sfn.LogOptions => ({
      destination: this.logGroup,
      level,
      includeExecutionData: false,
    });
    this.followUps = new sfn.StateMachine(this, 'FollowUps', {
      stateMachineName: props.followUpStateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(route),
      timeout: Duration.hours(workflow.timeoutHours),
      tracingEnabled: stateMachineTracing(props.tracing),
      // Every transition: the post-mortem of a late settlement or a delivery given up (the webhooks-given-up
      // alarm reads MarkDeliveryFailed entered here). Rare, so cheap.
      logs: logging(sfn.LogLevel.ALL),
    });

    // The job's run.
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
        errors: [expressThrottleRetry.error],
        interval: Duration.seconds(expressThrottleRetry.intervalSeconds),
        maxAttempts: expressThrottleRetry.maxAttempts,
        backoffRate: expressThrottleRetry.backoffRate,
        maxDelay: Duration.seconds(expressThrottleRetry.maxDelaySeconds),
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
    const settleFailure = invoke('SettleFailure', props.settleJob, {
      payload: failurePayload,
      resultPath: sfn.JsonPath.DISCARD,
    });
    const deliverWebhook = invoke('DeliverWebhook', props.deliverWebhook, {
      payload: sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        execution: sfn.JsonPath.stringAt('$$.Execution.Name'),
      }),
      resultPath: '$.webhook',
    });
    const settled = new sfn.Succeed(this, 'JobSettled');
    const handOff = (stateId: string, withFailure: boolean) => {
      const task = new tasks.StepFunctionsStartExecution(this, stateId, {
        stateMachine: this.followUps,
        integrationPattern: sfn.IntegrationPattern.REQUEST_RESPONSE,
        // One follow-up per job run, however often the run itself is repeated.
        name: sfn.JsonPath.format(`{}${FOLLOW_UP_SUFFIX}`, sfn.JsonPath.stringAt('$$.Execution.Name')),
        input: sfn.TaskInput.fromObject({
          jobId: sfn.JsonPath.stringAt('$.jobId'),
          execution: sfn.JsonPath.stringAt('$$.Execution.Name'),
          ...(withFailure ? { failure: sfn.JsonPath.objectAt('$.failure') } : {}),
        }),
        resultPath: sfn.JsonPath.DISCARD,
        taskTimeout: sfn.Timeout.duration(Duration.seconds(workflow.taskTimeoutSeconds)),
      });
      // Taken already: a repeated run of this job run handed it over before. Never retried (the first
      // matching retrier counts), caught as the end it is.
      task.addRetry({ errors: [followUpTaken], maxAttempts: 0 });
      task.addRetry({
        errors: [sfn.Errors.ALL],
        interval: Duration.seconds(workflow.retryIntervalSeconds),
        maxAttempts: workflow.retryMaxAttempts,
        backoffRate: workflow.retryBackoffRate,
        jitterStrategy: sfn.JitterType.FULL,
      });
      task.addCatch(settled, { errors: [followUpTaken], resultPath: sfn.JsonPath.DISCARD });
      return task.next(settled);
    };

    for (const task of [prepareJob, runInference, settleSuccess]) {
      task.addCatch(settleFailure, { errors: [sfn.Errors.ALL], resultPath: '$.failure' });
    }
    settleFailure.addCatch(handOff('HandOffSettlement', true), {
      errors: [sfn.Errors.ALL],
      resultPath: '$.settleError',
    });
    settleFailure.next(deliverWebhook);
    deliverWebhook.addCatch(handOff('HandOffWebhook', false), {
      errors: [sfn.Errors.ALL],
      resultPath: '$.webhookError',
    });

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: sfn.StateMachineType.EXPRESS,
      definitionBody: sfn.DefinitionBody.fromChainable(
        prepareJob.next(runInference).next(settleSuccess).next(deliverWebhook).next(settled),
      ),
      timeout: Duration.seconds(workflow.expressTimeoutSeconds),
      tracingEnabled: stateMachineTracing(props.tracing),
      // Errors only: an Express run has no history but its log, and what a post-mortem needs of a job run is
      // where it failed; every transition of every job would be about half of what a job's logs ingest.
      logs: logging(sfn.LogLevel.ERROR),
    });
    acknowledge(this.stateMachine, {
      'AwsSolutions-SF1':
        'Job runs log their errors only: every transition of every job would be about half of what a job ingests in logs; the follow-ups log ALL.',
    });
  }
}

/** What the StartExecution integration fails with when the name is taken. */
const followUpTaken = 'StepFunctions.ExecutionAlreadyExistsException';
