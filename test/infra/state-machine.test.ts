import { describe, expect, it } from 'vitest';
import {
  handlerMetadataKey,
  inference,
  lastResortSettlement,
  throttleRetry,
  webhookRetry,
  workflowFunction,
  workflowHandlers,
} from '../../lib/config.ts';
import { resolveJoin, resourcesOfType, synthesize } from './templates.ts';

const { serviceJson } = await synthesize();

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
  Retry?: { ErrorEquals: string[]; [key: string]: unknown }[];
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
    expect(machines.length).toBe(2);
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
    expect(checked).toBeGreaterThanOrEqual(tasks.length);
  });
});

describe('job workflow state machine', () => {
  it('is a STANDARD machine with X-Ray tracing and every transition logged, without state data', () => {
    expect(stateMachine?.Properties).toMatchObject({
      StateMachineType: 'STANDARD',
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
    });
  });

  it('gives up on an execution after 24 hours, room for the whole webhook schedule', () => {
    expect(definition.TimeoutSeconds).toBe(24 * 3600);
    expect(worstCaseSeconds(states.DeliverWebhook!)).toBeLessThan(12 * 3600);
  });

  it('has exactly these states, starting at PrepareJob', () => {
    expect(definition.StartAt).toBe('PrepareJob');
    expect(Object.keys(states).sort()).toEqual(
      [
        'DeliverWebhook',
        'JobSettled',
        'MarkDeliveryFailed',
        'PrepareJob',
        'RunInference',
        'SettleFailure',
        'SettleLastResort',
        'SettleSuccess',
      ].sort(),
    );
    expect(states.JobSettled?.Type).toBe('Succeed');
    expect(Object.values(states).filter((state) => state.Type === 'Fail')).toEqual([]);
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
      Next: 'SettleSuccess',
    });
    expect(states.RunInference?.Parameters).toBeUndefined();
  });

  it('settles success with the result, discards the answer and goes on to the webhook', () => {
    expect(states.SettleSuccess).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.settleJob),
      Parameters: { 'jobId.$': '$.jobId', outcome: 'success', 'result.$': '$.result' },
      ResultPath: null,
      Next: 'DeliverWebhook',
    });
  });

  it.each(['SettleFailure', 'SettleLastResort'])(
    '%s settles failure with the caught error and goes on to the webhook',
    (name) => {
      expect(states[name]).toMatchObject({
        Type: 'Task',
        Resource: functionArnOf(workflowHandlers.settleJob),
        Parameters: { 'jobId.$': '$.jobId', outcome: 'failure', 'failure.$': '$.failure' },
        ResultPath: null,
        Next: 'DeliverWebhook',
      });
    },
  );

  it.each(['PrepareJob', 'RunInference', 'SettleSuccess'])('%s sends any error to SettleFailure', (name) => {
    expect(states[name]?.Catch).toEqual(catchAll('SettleFailure', '$.failure'));
  });

  it('sends a failure to settle a failure to SettleLastResort, keeping the original failure', () => {
    expect(states.SettleFailure?.Catch).toEqual(catchAll('SettleLastResort', '$.settleError'));
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

  it('catches every error of every task, except the last-resort settlement', () => {
    for (const [name, task] of tasks) {
      if (name === 'SettleLastResort') continue;
      expect(task.Catch?.[0]?.ErrorEquals, name).toEqual(['States.ALL']);
    }
  });

  it('bounds every task with a timeout and the job work to well under the execution limit', () => {
    for (const [name, task] of tasks) {
      // The task waits the function's timeout plus Lambda's init phase (up to 10 s, which Step Functions
      // counts and the function's timeout does not) and more: a timeout means the function is gone.
      const functionTimeout =
        name === 'RunInference' ? inference.timeoutSeconds : workflowFunction.timeoutSeconds;
      expect(task.TimeoutSeconds, name).toBeGreaterThan(functionTimeout + 10);
    }
    // Worst case until the job is settled on the longest path: prepare, inference, a failing success
    // settlement, a failing failure settlement and the last resort, every attempt timing out.
    const path = ['PrepareJob', 'RunInference', 'SettleSuccess', 'SettleFailure', 'SettleLastResort'];
    const jobWork = path.reduce((sum, name) => sum + worstCaseSeconds(states[name]!), 0);
    expect(jobWork).toBeLessThan(4 * 3600);
    expect(
      jobWork + worstCaseSeconds(states.DeliverWebhook!) + worstCaseSeconds(states.MarkDeliveryFailed!),
    ).toBeLessThan(definition.TimeoutSeconds!);
  });

  it('reaches the webhook from every settlement and ends in Succeed after it', () => {
    for (const name of ['SettleSuccess', 'SettleFailure', 'SettleLastResort']) {
      expect(reachable(name), name).toContain('DeliverWebhook');
    }
    expect(reachable('DeliverWebhook')).toEqual(
      new Set(['DeliverWebhook', 'MarkDeliveryFailed', 'JobSettled']),
    );
  });

  it('delivers the webhook with the execution name and retries on the published schedule', () => {
    expect(states.DeliverWebhook).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.deliverWebhook),
      Parameters: { 'jobId.$': '$.jobId', 'execution.$': '$$.Execution.Name' },
      ResultPath: '$.webhook',
      Next: 'JobSettled',
    });
    expect(states.DeliverWebhook?.Retry).toEqual([
      TRANSIENT_RETRY,
      {
        ErrorEquals: ['WebhookDeliveryError'],
        IntervalSeconds: 30,
        MaxAttempts: 7,
        BackoffRate: 4,
        MaxDelaySeconds: 4 * 3600,
        JitterStrategy: 'FULL',
      },
    ]);
    expect(webhookRetry.error).toBe('WebhookDeliveryError');
    expect(states.DeliverWebhook?.Catch).toEqual(catchAll('MarkDeliveryFailed', '$.webhookError'));
  });

  it('marks the delivery failed after the last attempt and still succeeds', () => {
    expect(states.MarkDeliveryFailed).toMatchObject({
      Type: 'Task',
      Resource: functionArnOf(workflowHandlers.deliverWebhook),
      Parameters: { 'jobId.$': '$.jobId', 'execution.$': '$$.Execution.Name', final: true },
      ResultPath: '$.webhook',
      Next: 'JobSettled',
    });
    expect(states.MarkDeliveryFailed?.Catch).toEqual(catchAll('JobSettled', '$.webhookError'));
  });

  it.each(tasks.map(([name]) => name).filter((name) => !['SettleLastResort', 'RunInference'].includes(name)))(
    '%s retries the transient errors first, with full jitter',
    (name) => {
      expect(states[name]?.Retry?.[0]).toEqual(TRANSIENT_RETRY);
    },
  );

  // Throttled means the function never ran (its reserved concurrency was in use): a burst of jobs waits its
  // turn for minutes instead of failing after three quick retries.
  it('waits out throttling of the inference function first, then retries transient errors', () => {
    expect(states.RunInference?.Retry).toEqual([
      {
        ErrorEquals: ['Lambda.TooManyRequestsException'],
        IntervalSeconds: throttleRetry.intervalSeconds,
        MaxAttempts: throttleRetry.maxAttempts,
        BackoffRate: throttleRetry.backoffRate,
        MaxDelaySeconds: throttleRetry.maxDelaySeconds,
        JitterStrategy: 'FULL',
      },
      TRANSIENT_RETRY,
    ]);
    expect(
      worstCaseSeconds({ ...states.RunInference!, Retry: states.RunInference!.Retry!.slice(0, 1) }),
    ).toBeLessThan(3600);
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
