import { describe, expect, it } from 'vitest';
import {
  expressThrottleRetry,
  handlerMetadataKey,
  inference,
  lastResortSettlement,
  webhookRetry,
  workflowFunction,
  workflowHandlers,
} from '../../lib/config.ts';
import { resolveJoin, resourcesOfType, synthesize } from './templates.ts';

const { serviceJson } = await synthesize();

const machines = resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine').map(([, machine]) => ({
  properties: machine.Properties,
  definitionString: resolveJoin(machine.Properties.DefinitionString),
}));
const machineStartingAt = (state: string) =>
  machines.find((machine) => machine.definitionString.includes(`{"StartAt":"${state}"`))!;
const jobMachine = machineStartingAt('PrepareJob');
const followUpMachine = machineStartingAt('FollowUp');
const definitionString = jobMachine.definitionString;

interface State {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  Parameters?: Record<string, unknown>;
  InputPath?: string;
  ResultPath?: string | null;
  TimeoutSeconds?: number;
  Retry?: { ErrorEquals: string[]; [key: string]: unknown }[];
  Catch?: { ErrorEquals: string[]; ResultPath?: string; Next: string }[];
}
const definition = JSON.parse(definitionString) as {
  StartAt: string;
  TimeoutSeconds?: number;
  QueryLanguage?: string;
  States: Record<string, State>;
};
const followUp = JSON.parse(followUpMachine.definitionString) as typeof definition;
/** The states of both machines of a job: no name is used twice. */
const states = { ...definition.States, ...followUp.States };
const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');
const lambdaTasks = tasks.filter(([, state]) => !state.Resource?.includes('states:startExecution'));

/** The placeholder `resolveJoin` leaves for the ARN of the function whose entry file is `handler`. */
const functionArnOf = (handler: string) => {
  const [[logicalId] = []] = resourcesOfType(serviceJson, 'AWS::Lambda::Function').filter(
    ([, fn]) => fn.Metadata?.[handlerMetadataKey] === handler,
  );
  return `\${Token[${logicalId}.Arn]}`;
};

const TRANSIENT_RETRY = {
  ErrorEquals: [
    'Lambda.ServiceException',
    'Lambda.AWSLambdaException',
    'Lambda.SdkClientException',
    'Lambda.TooManyRequestsException',
    'Lambda.ClientExecutionTimeoutException',
    'TransientError',
  ],
  IntervalSeconds: 2,
  MaxAttempts: 3,
  BackoffRate: 2,
  JitterStrategy: 'FULL',
};
const catchAll = (next: string, resultPath: string) => [
  { ErrorEquals: ['States.ALL'], ResultPath: resultPath, Next: next },
];

/** Every state reachable from `from` through Next and Catch. */
function reachable(from: string): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const state = states[name];
    if (state?.Next) visit(state.Next);
    for (const catcher of state?.Catch ?? []) visit(catcher.Next);
  };
  visit(from);
  return seen;
}

/** Upper bound of the time a task can take with all its retries: attempts × timeout + the longest waits. */
function worstCaseSeconds(state: State): number {
  let total = state.TimeoutSeconds ?? Number.POSITIVE_INFINITY;
  for (const retrier of state.Retry ?? []) {
    const {
      IntervalSeconds = 1,
      MaxAttempts = 3,
      BackoffRate = 2,
      MaxDelaySeconds,
    } = retrier as Record<string, number>;
    for (let n = 0; n < MaxAttempts; n++) {
      total += Math.min(IntervalSeconds * BackoffRate ** n, MaxDelaySeconds ?? Number.POSITIVE_INFINITY);
      total += state.TimeoutSeconds ?? Number.POSITIVE_INFINITY;
    }
  }
  return total;
}

describe('every state machine', () => {
  // Step Functions counts a task from the invoke, init phase included (up to 10 s, outside the function's
  // own timeout): a task that waits only the function's timeout ends a slow cold run as States.Timeout
  // while the function goes on writing.
  it('waits on each Lambda task longer than its function may take, init phase included', () => {
    const functions = new Map(resourcesOfType(serviceJson, 'AWS::Lambda::Function'));
    const machines = resourcesOfType(serviceJson, 'AWS::StepFunctions::StateMachine');
    expect(machines.length).toBe(3);
    let checked = 0;
    for (const [, machine] of machines) {
      const { States } = JSON.parse(resolveJoin(machine.Properties.DefinitionString)) as {
        States: Record<string, State>;
      };
      for (const [name, state] of Object.entries(States)) {
        const target = state.Resource?.match(/^\$\{Token\[(\w+)\.Arn\]\}$/)?.[1];
        if (state.Type !== 'Task' || !target) continue;
        const timeout = functions.get(target)?.Properties.Timeout as number;
        expect(timeout, name).toBeGreaterThan(0);
        expect(state.TimeoutSeconds, name).toBeGreaterThan(timeout + 10);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(lambdaTasks.length);
  });
});

describe('job workflow: the Express run and its Standard follow-ups', () => {
  it('runs each job on an Express machine within its five minutes, its errors logged without data', () => {
    expect(jobMachine.properties).toMatchObject({
      StateMachineType: 'EXPRESS',
      LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: false },
    });
    expect(definition.TimeoutSeconds).toBe(300);
  });

  it('hands the long waits to a Standard machine that may run 24 hours, room for the webhook schedule', () => {
    expect(followUpMachine.properties).toMatchObject({
      StateMachineType: 'STANDARD',
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
    expect(followUp.TimeoutSeconds).toBe(24 * 3600);
    const jobWork = worstCaseSeconds(states.SettleLastResort!);
    const webhook =
      30 + worstCaseSeconds(states.RetryWebhook!) + worstCaseSeconds(states.MarkDeliveryFailed!);
    expect(jobWork + webhook).toBeLessThan(followUp.TimeoutSeconds!);
  });

  it('has exactly these states, the job run starting at PrepareJob and the follow-ups at FollowUp', () => {
    expect(Object.keys(definition.States).sort()).toEqual(
      [
        'DeliverWebhook',
        'HandOffSettlement',
        'HandOffWebhook',
        'JobSettled',
        'PrepareJob',
        'RunInference',
        'SettleFailure',
        'SettleSuccess',
      ].sort(),
    );
    expect(Object.keys(followUp.States).sort()).toEqual(
      [
        'FollowUp',
        'FollowedUp',
        'MarkDeliveryFailed',
        'RetryWebhook',
        'SettleLastResort',
        'WaitToRetryWebhook',
      ].sort(),
    );
    expect(Object.values(states).filter((state) => state.Type === 'Fail')).toEqual([]);
  });

  it('reaches the webhook from every settlement and ends every run in Succeed', () => {
    for (const name of ['SettleSuccess', 'SettleFailure'])
      expect(reachable(name), name).toContain('DeliverWebhook');
    expect(reachable('DeliverWebhook')).toEqual(new Set(['DeliverWebhook', 'HandOffWebhook', 'JobSettled']));
    expect(reachable('SettleLastResort')).toEqual(
      new Set(['SettleLastResort', 'WaitToRetryWebhook', 'RetryWebhook', 'MarkDeliveryFailed', 'FollowedUp']),
    );
  });

  it('prepares the order, hands it to the inference function and settles success with the result', () => {
    expect(states.PrepareJob).toMatchObject({
      Resource: functionArnOf(workflowHandlers.prepareJob),
      Parameters: { 'jobId.$': '$.jobId' },
      ResultPath: '$.order',
      Next: 'RunInference',
    });
    expect(states.RunInference).toMatchObject({
      Resource: functionArnOf(inference.handler),
      InputPath: '$.order',
      ResultPath: '$.result',
      Next: 'SettleSuccess',
    });
    expect(states.SettleSuccess).toMatchObject({
      Resource: functionArnOf(workflowHandlers.settleJob),
      Parameters: { 'jobId.$': '$.jobId', outcome: 'success', 'result.$': '$.result' },
      ResultPath: null,
      Next: 'DeliverWebhook',
    });
  });

  it.each(['PrepareJob', 'RunInference', 'SettleSuccess'])('%s sends any error to SettleFailure', (name) => {
    expect(states[name]?.Catch).toEqual(catchAll('SettleFailure', '$.failure'));
  });

  it('settles a failure, and hands a failing settlement over with its failure, keeping the original', () => {
    for (const name of ['SettleFailure', 'SettleLastResort'])
      expect(states[name], name).toMatchObject({
        Resource: functionArnOf(workflowHandlers.settleJob),
        Parameters: { 'jobId.$': '$.jobId', outcome: 'failure', 'failure.$': '$.failure' },
        ResultPath: null,
      });
    expect(states.SettleFailure?.Next).toBe('DeliverWebhook');
    expect(states.SettleFailure?.Catch).toEqual(catchAll('HandOffSettlement', '$.settleError'));
    expect(states.HandOffSettlement?.Parameters?.Input).toEqual({
      'jobId.$': '$.jobId',
      'execution.$': '$$.Execution.Name',
      'failure.$': '$.failure',
    });
  });

  it('starts one follow-up per job run, by name, and ends the run when a repeated run finds it started', () => {
    for (const name of ['HandOffSettlement', 'HandOffWebhook']) {
      expect(states[name], name).toMatchObject({
        Resource: expect.stringMatching(/:states:::states:startExecution\}?$/),
        Parameters: {
          StateMachineArn: expect.stringContaining('FollowUps'),
          'Name.$': "States.Format('{}-follow-up', $$.Execution.Name)",
        },
        Next: 'JobSettled',
      });
      expect(states[name]?.Retry?.[0]).toEqual({
        ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException'],
        MaxAttempts: 0,
      });
      expect(states[name]?.Catch).toEqual([
        {
          ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException'],
          ResultPath: null,
          Next: 'JobSettled',
        },
      ]);
    }
    expect(states.HandOffWebhook?.Parameters?.Input).toEqual({
      'jobId.$': '$.jobId',
      'execution.$': '$$.Execution.Name',
    });
  });

  it('routes a follow-up with a failure to the last-resort settlement, any other to the webhook retries', () => {
    expect(states.FollowUp).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.failure', IsPresent: true, Next: 'SettleLastResort' }],
      Default: 'WaitToRetryWebhook',
    });
    expect(states.SettleLastResort?.Next).toBe('WaitToRetryWebhook');
  });

  it('retries the last-resort settlement on any error for hours, and nothing catches after it', () => {
    expect(states.SettleLastResort?.Retry).toEqual([
      {
        ErrorEquals: ['States.ALL'],
        IntervalSeconds: lastResortSettlement.intervalSeconds,
        MaxAttempts: lastResortSettlement.maxAttempts,
        BackoffRate: lastResortSettlement.backoffRate,
        MaxDelaySeconds: lastResortSettlement.maxDelaySeconds,
        JitterStrategy: 'FULL',
      },
    ]);
    expect(states.SettleLastResort?.Catch).toBeUndefined();
  });

  it('makes the first webhook attempt in the run, and hands any failure of it to the follow-up', () => {
    expect(states.DeliverWebhook).toMatchObject({
      Resource: functionArnOf(workflowHandlers.deliverWebhook),
      Parameters: { 'jobId.$': '$.jobId', 'execution.$': '$$.Execution.Name' },
      ResultPath: '$.webhook',
      Next: 'JobSettled',
    });
    expect(states.DeliverWebhook?.Retry).toEqual([TRANSIENT_RETRY]);
    expect(states.DeliverWebhook?.Catch).toEqual(catchAll('HandOffWebhook', '$.webhookError'));
  });

  it('retries the webhook in the follow-up on the published schedule: the first wait, then the retrier', () => {
    expect(webhookRetry.error).toBe('WebhookDeliveryError');
    expect(states.WaitToRetryWebhook).toEqual({ Type: 'Wait', Seconds: 30, Next: 'RetryWebhook' });
    expect(states.RetryWebhook).toMatchObject({
      Resource: functionArnOf(workflowHandlers.deliverWebhook),
      Parameters: { 'jobId.$': '$.jobId', 'execution.$': '$.execution' },
      Next: 'FollowedUp',
    });
    // Waits of at most 30 s, then 2 min, 8 min, ... 4 h: the schedule's bounds, one attempt in the run.
    expect(states.RetryWebhook?.Retry).toEqual([
      TRANSIENT_RETRY,
      {
        ErrorEquals: ['WebhookDeliveryError'],
        IntervalSeconds: 120,
        MaxAttempts: 6,
        BackoffRate: 4,
        MaxDelaySeconds: 4 * 3600,
        JitterStrategy: 'FULL',
      },
    ]);
    expect(states.RetryWebhook?.Catch).toEqual(catchAll('MarkDeliveryFailed', '$.webhookError'));
    expect(states.MarkDeliveryFailed).toMatchObject({
      Parameters: { 'jobId.$': '$.jobId', 'execution.$': '$.execution', final: true },
      Next: 'FollowedUp',
    });
    expect(states.MarkDeliveryFailed?.Catch).toEqual(catchAll('FollowedUp', '$.webhookError'));
  });

  it('bounds every task with a timeout, and the job run on its usual path within five minutes', () => {
    for (const [name, task] of lambdaTasks) {
      const functionTimeout =
        name === 'RunInference' ? inference.timeoutSeconds : workflowFunction.timeoutSeconds;
      expect(task.TimeoutSeconds, name).toBeGreaterThan(functionTimeout + 10);
    }
    // Throttled, the inference function never ran: its waits and then one full run fit in the run's limit.
    const throttle = states.RunInference!.Retry![0] as unknown as Record<string, number>;
    let waits = 0;
    for (let n = 0; n < throttle.MaxAttempts!; n++)
      waits += Math.min(throttle.IntervalSeconds! * throttle.BackoffRate! ** n, throttle.MaxDelaySeconds!);
    expect(waits + states.RunInference!.TimeoutSeconds!).toBeLessThan(definition.TimeoutSeconds!);
  });

  it('waits out throttling of the inference function first (about two minutes), then retries transient errors', () => {
    expect(states.RunInference?.Retry).toEqual([
      {
        ErrorEquals: ['Lambda.TooManyRequestsException'],
        IntervalSeconds: expressThrottleRetry.intervalSeconds,
        MaxAttempts: expressThrottleRetry.maxAttempts,
        BackoffRate: expressThrottleRetry.backoffRate,
        MaxDelaySeconds: expressThrottleRetry.maxDelaySeconds,
        JitterStrategy: 'FULL',
      },
      TRANSIENT_RETRY,
    ]);
  });

  it.each(
    lambdaTasks.map(([name]) => name).filter((name) => !['SettleLastResort', 'RunInference'].includes(name)),
  )('%s retries the transient errors first, with full jitter', (name) => {
    expect(states[name]?.Retry?.[0]).toEqual(TRANSIENT_RETRY);
  });

  it('invokes functions directly (payload only), never through a callback or .sync', () => {
    for (const [name, task] of lambdaTasks) expect(task.Resource, name).toMatch(/^\$\{Token\[\w+\.Arn\]\}$/);
    for (const text of [definitionString, followUpMachine.definitionString]) {
      expect(text).not.toContain('waitForTaskToken');
      expect(text).not.toContain('.sync');
    }
  });

  it('uses nothing the local runner cannot execute', () => {
    for (const text of [definitionString, followUpMachine.definitionString]) {
      for (const forbidden of ['JSONata', 'Assign', 'Arguments', 'ItemProcessor', 'DISTRIBUTED', '{%']) {
        expect(text).not.toContain(forbidden);
      }
    }
  });
});
