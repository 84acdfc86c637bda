import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { inference, workflow } from '../config.ts';
import { createLogGroup } from './log-group.ts';

export interface JobWorkflowProps {
  prepareJob: lambda.IFunction;
  runInference: lambda.IFunction;
  settleJob: lambda.IFunction;
  stateMachineName: string;
}

/**
 * One execution per job; its input is `{ "jobId": "..." }`.
 *
 * Plain JSONPath states only (no JSONata, `Assign`, callbacks or Distributed Map): the local runner
 * executes this same definition. A failed job is a business outcome, so after SettleFailure the execution
 * still ends in a Succeed state; only a failure to settle fails the execution.
 */
export class JobWorkflow extends Construct {
  readonly stateMachine: sfn.StateMachine;

  constructor(scope: Construct, id: string, props: JobWorkflowProps) {
    super(scope, id);

    const invoke = (stateId: string, fn: lambda.IFunction, options: Partial<tasks.LambdaInvokeProps>) => {
      const task = new tasks.LambdaInvoke(this, stateId, {
        lambdaFunction: fn,
        payloadResponseOnly: true,
        // The retry below replaces the default one, which would also retry for six attempts.
        retryOnServiceExceptions: false,
        ...options,
      });
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
    const runInference = invoke('RunInference', props.runInference, {
      inputPath: '$.order',
      resultPath: '$.result',
      taskTimeout: sfn.Timeout.duration(Duration.seconds(inference.timeoutSeconds)),
    });
    const settleSuccess = invoke('SettleSuccess', props.settleJob, {
      payload: sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        outcome: 'success',
        result: sfn.JsonPath.objectAt('$.result'),
      }),
      resultPath: sfn.JsonPath.DISCARD,
    });
    const settleFailure = invoke('SettleFailure', props.settleJob, {
      payload: sfn.TaskInput.fromObject({
        jobId: sfn.JsonPath.stringAt('$.jobId'),
        outcome: 'failure',
        failure: sfn.JsonPath.objectAt('$.failure'),
      }),
      resultPath: sfn.JsonPath.DISCARD,
    });
    const settled = new sfn.Succeed(this, 'JobSettled');

    for (const task of [prepareJob, runInference]) {
      task.addCatch(settleFailure, { errors: [sfn.Errors.ALL], resultPath: '$.failure' });
    }
    settleFailure.next(settled);

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(
        prepareJob.next(runInference).next(settleSuccess).next(settled),
      ),
      timeout: Duration.minutes(workflow.timeoutMinutes),
      tracingEnabled: true,
      logs: { destination: createLogGroup(this, 'Logs'), level: sfn.LogLevel.ERROR },
    });
  }
}
