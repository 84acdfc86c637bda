import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { archiveFunction, taskTimeoutSeconds, workflow } from '../config.ts';
import { createVendedLogGroup } from './log-group.ts';
import { stateMachineTracing, type TracingMode } from './tracing.ts';

export interface ArchiveWorkflowProps {
  batchArchive: lambda.IFunction;
  stateMachineName: string;
  logRetention?: logs.RetentionDays;
  tracing: TracingMode;
}

/**
 * One execution per archive task; its input is `{ "task": "unpack" | "download", "batchId": "..." }`.
 *
 * RunArchiveTask reads a batch's archive from S3 by ranges and stores its photos, or streams a batch's
 * results into its download ZIP: minutes of work that the 29-second API function must not do. Transient
 * errors are retried; any other error goes to ArchiveFailed (the same function, told `failed`), which
 * fails an unpacking batch with the reason, and then the execution fails so its history shows why.
 * Plain JSONPath states only: the local runner executes this same definition.
 */
export class ArchiveWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;

  constructor(scope: Construct, id: string, props: ArchiveWorkflowProps) {
    super(scope, id);
    const run = new tasks.LambdaInvoke(this, 'RunArchiveTask', {
      lambdaFunction: props.batchArchive,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      taskTimeout: sfn.Timeout.duration(Duration.seconds(taskTimeoutSeconds(archiveFunction.timeoutSeconds))),
      resultPath: '$.result',
    });
    run.addRetry({
      errors: [...workflow.retryErrors],
      interval: Duration.seconds(workflow.retryIntervalSeconds),
      maxAttempts: workflow.retryMaxAttempts,
      backoffRate: workflow.retryBackoffRate,
      jitterStrategy: sfn.JitterType.FULL,
    });
    const failed = new tasks.LambdaInvoke(this, 'ArchiveFailed', {
      lambdaFunction: props.batchArchive,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      // The archive function's timeout, though marking a failure is quick: no task may outlive its wait.
      taskTimeout: sfn.Timeout.duration(Duration.seconds(taskTimeoutSeconds(archiveFunction.timeoutSeconds))),
      payload: sfn.TaskInput.fromObject({
        task: sfn.JsonPath.stringAt('$.task'),
        batchId: sfn.JsonPath.stringAt('$.batchId'),
        failed: true,
        failure: sfn.JsonPath.objectAt('$.failure'),
      }),
      resultPath: sfn.JsonPath.DISCARD,
    });
    failed.addRetry({
      errors: [sfn.Errors.ALL],
      interval: Duration.seconds(workflow.retryIntervalSeconds),
      maxAttempts: workflow.retryMaxAttempts,
      backoffRate: workflow.retryBackoffRate,
      jitterStrategy: sfn.JitterType.FULL,
    });
    run.addCatch(failed, { errors: [sfn.Errors.ALL], resultPath: '$.failure' });
    failed.next(new sfn.Fail(this, 'ArchiveTaskFailed', { error: 'ArchiveTaskFailed' }));

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(run.next(new sfn.Succeed(this, 'ArchiveTaskDone'))),
      timeout: Duration.hours(1),
      tracingEnabled: stateMachineTracing(props.tracing),
      // Every transition without the states' data, as the job workflow logs (job-workflow.ts).
      logs: {
        destination: createVendedLogGroup(this, 'Logs', props.logRetention),
        level: sfn.LogLevel.ALL,
        includeExecutionData: false,
      },
    });
  }
}
