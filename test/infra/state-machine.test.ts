import { describe, expect, it } from 'vitest';
import { handlerMetadataKey, inference, workflowHandlers } from '../../lib/config.ts';
import { resolveJoin, resourcesOfType, synthesize } from './templates.ts';

const { serviceJson } = synthesize();

const [[, stateMachine] = []] = resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine');
const definitionString = resolveJoin(stateMachine?.Properties.DefinitionString);

interface State {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  Parameters?: Record<string, unknown>;
  InputPath?: string;
  ResultPath?: string | null;
  TimeoutSeconds?: number;
  Retry?: Record<string, unknown>[];
  Catch?: { ErrorEquals: string[]; ResultPath?: string; Next: string }[];
}
const definition = JSON.parse(definitionString) as {
  StartAt: string;
  TimeoutSeconds?: number;
  QueryLanguage?: string;
  States: Record<string, State>;
};
const states = definition.States;
const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');

/** The placeholder `resolveJoin` leaves for the ARN of the function whose entry file is `handler`. */
const functionArnOf = (handler: string) => {
  const [[logicalId] = []] = resourcesOfType(serviceJson, 'AWS::Lambda::Function').filter(
    ([, fn]) => fn.Metadata?.[handlerMetadataKey] === handler,
  );
  return `\${Token[${logicalId}.Arn]}`;
};

describe('job workflow state machine', () => {
  it('is a STANDARD machine with X-Ray tracing and ERROR-level logs', () => {
    expect(stateMachine?.Properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { Level: 'ERROR' },
    });
  });

  it('gives up on an execution after 15 minutes', () => {
    expect(definition.TimeoutSeconds).toBe(900);
  });

  it('has exactly the five states, starting at PrepareJob', () => {
    expect(definition.StartAt).toBe('PrepareJob');
    expect(Object.keys(states).sort()).toEqual(
      ['JobSettled', 'PrepareJob', 'RunInference', 'SettleFailure', 'SettleSuccess'].sort(),
    );
    expect(states.JobSettled?.Type).toBe('Succeed');
  });

  it('prepares the order from the jobId', () => {
    expect(states.PrepareJob).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.prepareJob),
      Parameters: { 'jobId.$': '$.jobId' },
      ResultPath: '$.order',
      Next: 'RunInference',
    });
  });

  it('hands the order to the inference function and keeps its result', () => {
    expect(states.RunInference).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(inference.handler),
      InputPath: '$.order',
      ResultPath: '$.result',
      TimeoutSeconds: 120,
      Next: 'SettleSuccess',
    });
    expect(states.RunInference?.Parameters).toBeUndefined();
  });

  it('settles success with the result and discards the answer', () => {
    expect(states.SettleSuccess).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.settleJob),
      Parameters: { 'jobId.$': '$.jobId', outcome: 'success', 'result.$': '$.result' },
      ResultPath: null,
      Next: 'JobSettled',
    });
  });

  it('settles failure with the caught error and still ends in Succeed', () => {
    expect(states.SettleFailure).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.settleJob),
      Parameters: { 'jobId.$': '$.jobId', outcome: 'failure', 'failure.$': '$.failure' },
      ResultPath: null,
      Next: 'JobSettled',
    });
  });

  it.each(tasks.map(([name]) => name))('%s retries only the transient errors, with full jitter', (name) => {
    expect(states[name]?.Retry).toEqual([
      {
        ErrorEquals: [
          'Lambda.ServiceException',
          'Lambda.AWSLambdaException',
          'Lambda.SdkClientException',
          'Lambda.TooManyRequestsException',
          'TransientError',
        ],
        IntervalSeconds: 2,
        MaxAttempts: 3,
        BackoffRate: 2,
        JitterStrategy: 'FULL',
      },
    ]);
  });

  it.each(['PrepareJob', 'RunInference'])('%s sends any error to SettleFailure', (name) => {
    expect(states[name]?.Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'SettleFailure' },
    ]);
  });

  it('does not catch errors while settling', () => {
    expect(states.SettleSuccess?.Catch).toBeUndefined();
    expect(states.SettleFailure?.Catch).toBeUndefined();
  });

  it('invokes functions directly (payload only), never through a callback', () => {
    for (const [name, task] of tasks) {
      expect(task.Resource, name).toMatch(/^\$\{Token\[\w+\.Arn\]\}$/);
    }
    expect(definitionString).not.toContain('waitForTaskToken');
  });

  it('uses nothing the local runner cannot execute', () => {
    expect(definition.QueryLanguage).toBeUndefined();
    for (const forbidden of ['JSONata', 'Assign', 'Arguments', 'ItemProcessor', 'DISTRIBUTED', '{%']) {
      expect(definitionString).not.toContain(forbidden);
    }
  });
});
