import {
  DescribeExecutionCommand,
  type DescribeExecutionCommandOutput,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStepFunctions } from '../../../local/stepfunctions.ts';
import { eventually } from '../../support/eventually.ts';
import { queuedRun } from '../../support/sleepy-handler.ts';

const machineArn = (name: string) => `arn:aws:states:us-east-1:000000000000:stateMachine:${name}`;
const fn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
/** A client of the stand-in, which checks no signature. */
const clientOf = (endpoint: string) =>
  new SFNClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

class PlateNotFoundError extends Error {
  override name = 'PlateNotFoundError';
}
class TransientError extends Error {
  override name = 'TransientError';
}

const definitions = {
  [machineArn('pipeline')]: {
    StartAt: 'Prepare',
    States: {
      Prepare: {
        Type: 'Task',
        Resource: fn('prepare'),
        Parameters: { 'jobId.$': '$.jobId' },
        ResultPath: '$.prepared',
        Next: 'Detect',
      },
      Detect: {
        Type: 'Task',
        Resource: 'arn:aws:states:::lambda:invoke',
        Parameters: { FunctionName: fn('detect'), 'Payload.$': '$.prepared' },
        ResultSelector: { 'plates.$': '$.Payload.plates' },
        ResultPath: '$.detected',
        Next: 'Settle',
      },
      Settle: { Type: 'Task', Resource: fn('settle'), ResultPath: '$.settled', End: true },
    },
  },
  [machineArn('nested')]: {
    StartAt: 'Fan',
    States: {
      Fan: {
        Type: 'Parallel',
        End: true,
        Branches: [
          {
            StartAt: 'Each',
            States: {
              Each: {
                Type: 'Map',
                ItemsPath: '$.items',
                End: true,
                ItemProcessor: {
                  StartAt: 'Double',
                  States: { Double: { Type: 'Task', Resource: fn('double'), End: true } },
                },
              },
            },
          },
          { StartAt: 'Count', States: { Count: { Type: 'Task', Resource: fn('count'), End: true } } },
        ],
      },
    },
  },
  [machineArn('flaky')]: {
    StartAt: 'Flaky',
    States: {
      Flaky: {
        Type: 'Task',
        Resource: fn('flaky'),
        Retry: [{ ErrorEquals: ['TransientError'], IntervalSeconds: 30, MaxAttempts: 3, BackoffRate: 2 }],
        End: true,
      },
    },
  },
  [machineArn('plates')]: {
    StartAt: 'ReadPlate',
    States: {
      ReadPlate: {
        Type: 'Task',
        Resource: fn('read-plate'),
        Retry: [{ ErrorEquals: ['PlateNotFoundError'], IntervalSeconds: 1, MaxAttempts: 1 }],
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Fallback' }],
        End: true,
      },
      Fallback: { Type: 'Task', Resource: fn('fallback'), End: true },
    },
  },
  [machineArn('failing')]: {
    StartAt: 'ReadPlate',
    States: { ReadPlate: { Type: 'Task', Resource: fn('read-plate'), End: true } },
  },
  [machineArn('deadline')]: {
    TimeoutSeconds: 1,
    StartAt: 'Wait',
    States: { Wait: { Type: 'Task', Resource: fn('slow'), End: true } },
  },
  [machineArn('task-deadline')]: {
    StartAt: 'Wait',
    States: {
      Wait: {
        Type: 'Task',
        Resource: fn('slow'),
        TimeoutSeconds: 1,
        Catch: [{ ErrorEquals: ['States.Timeout'], ResultPath: '$.failure', Next: 'TimedOut' }],
        End: true,
      },
      TimedOut: { Type: 'Pass', End: true },
    },
  },
  [machineArn('queued-deadline')]: {
    StartAt: 'Wait',
    States: { Wait: { Type: 'Task', Resource: fn('queued'), TimeoutSeconds: 1, End: true } },
  },
  [machineArn('oversized')]: {
    StartAt: 'Big',
    States: {
      Big: {
        Type: 'Task',
        Resource: fn('big'),
        Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Fallback' }],
        End: true,
      },
      Fallback: { Type: 'Task', Resource: fn('fallback'), End: true },
    },
  },
  [machineArn('slow')]: {
    StartAt: 'Wait',
    States: {
      Wait: { Type: 'Task', Resource: fn('slow'), Next: 'After' },
      After: { Type: 'Task', Resource: fn('after'), End: true },
    },
  },
};

describe('startLocalStepFunctions', () => {
  const calls: { arn: string; payload: unknown }[] = [];
  let flakyFailures = 0;
  let releaseSlow: (() => void)[] = [];
  const handlers: Record<string, (payload: unknown) => Promise<unknown>> = {
    [fn('prepare')]: async (p) => ({ ...(p as object), prepared: true }),
    [fn('detect')]: async () => ({ plates: ['AB-123'] }),
    [fn('settle')]: async () => 'settled',
    [fn('double')]: async (n) => (n as number) * 2,
    [fn('count')]: async (p) => (p as { items: unknown[] }).items.length,
    [fn('flaky')]: async () => {
      if (flakyFailures++ < 2) throw new TransientError('try again');
      return 'finally';
    },
    [fn('read-plate')]: async () => {
      throw new PlateNotFoundError('no plate in photo p1');
    },
    [fn('fallback')]: async (p) => p,
    [fn('slow')]: () => new Promise((resolve) => releaseSlow.push(() => resolve('slow done'))),
    [fn('after')]: async () => 'after',
    [fn('big')]: async (p) => 'x'.repeat((p as { size: number }).size),
  };
  let stack: Awaited<ReturnType<typeof startLocalStepFunctions>>;
  let sfn: SFNClient;

  const run = async (machine: string, input: unknown): Promise<DescribeExecutionCommandOutput> => {
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machineArn(machine), input: JSON.stringify(input) }),
    );
    await stack.idle();
    return sfn.send(new DescribeExecutionCommand({ executionArn }));
  };
  const callsTo = (name: string) => calls.filter((c) => c.arn === fn(name));
  const untilSlowStarted = (count: number) =>
    eventually(
      () => releaseSlow.length,
      (started) => started >= count,
      { intervalMs: 5 },
    );
  const untilEnded = (executionArn: string | undefined) =>
    eventually(
      () => sfn.send(new DescribeExecutionCommand({ executionArn })),
      (execution) => execution.status !== 'RUNNING',
      { intervalMs: 50 },
    );

  beforeAll(async () => {
    stack = await startLocalStepFunctions({
      stateMachines: definitions,
      retryIntervalScale: 0,
      invoke: (arn, payload, started) => {
        calls.push({ arn, payload });
        // `queued` waits 1.5 s for an instance before it runs for 0.2 s, as a local inference run may.
        if (arn !== fn('queued')) {
          started();
          return handlers[arn]!(payload);
        }
        return queuedRun(started, 1500, 200);
      },
    });
    sfn = clientOf(stack.endpoint);
  });
  afterAll(async () => {
    sfn.destroy();
    await stack.close();
  });

  it('runs tasks in order with Parameters, the lambda:invoke integration and ResultPath', async () => {
    calls.length = 0;
    const out = await run('pipeline', { jobId: 'j1', extra: 1 });
    expect(out.status).toBe('SUCCEEDED');
    expect(calls.map((c) => c.arn)).toEqual([fn('prepare'), fn('detect'), fn('settle')]);
    expect(calls[0]?.payload).toEqual({ jobId: 'j1' });
    expect(calls[1]?.payload).toEqual({ jobId: 'j1', prepared: true });
    expect(JSON.parse(out.output!)).toEqual({
      jobId: 'j1',
      extra: 1,
      prepared: { jobId: 'j1', prepared: true },
      detected: { plates: ['AB-123'] },
      settled: 'settled',
    });
    expect(out.startDate).toBeInstanceOf(Date);
    expect(out.stopDate!.getTime()).toBeGreaterThanOrEqual(out.startDate!.getTime());
  });

  it('overrides Task states nested in Parallel branches and Map item processors', async () => {
    const out = await run('nested', { items: [1, 2, 3] });
    expect(out.status).toBe('SUCCEEDED');
    expect(JSON.parse(out.output!)).toEqual([[2, 4, 6], 3]);
  });

  it('retries a TransientError twice, then succeeds, without the 30 s waits when scaled to 0', async () => {
    const started = Date.now();
    const out = await run('flaky', {});
    expect(out.status).toBe('SUCCEEDED');
    expect(JSON.parse(out.output!)).toBe('finally');
    expect(callsTo('flaky')).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('matches Retry and Catch by error name and hands the fallback {Error, Cause} as Lambda shapes them', async () => {
    calls.length = 0;
    const out = await run('plates', { photo: 'p1' });
    expect(out.status).toBe('SUCCEEDED');
    expect(callsTo('read-plate')).toHaveLength(2); // first try + one retry on PlateNotFoundError
    expect(callsTo('fallback')[0]?.payload).toEqual({
      photo: 'p1',
      failure: {
        Error: 'PlateNotFoundError',
        Cause: JSON.stringify({ errorType: 'PlateNotFoundError', errorMessage: 'no plate in photo p1' }),
      },
    });
  });

  it('reports an uncaught task error as FAILED with the same error and cause', async () => {
    const out = await run('failing', {});
    expect(out).toMatchObject({
      status: 'FAILED',
      error: 'PlateNotFoundError',
      cause: '{"errorType":"PlateNotFoundError","errorMessage":"no plate in photo p1"}',
    });
  });

  it('keeps an error that is already shaped like a Lambda failure as it is', async () => {
    const cause = JSON.stringify({ errorType: 'PlateNotFoundError', errorMessage: 'shaped upstream' });
    handlers[fn('read-plate')] = async () => {
      throw Object.assign(new Error(cause), { name: 'PlateNotFoundError' });
    };
    const out = await run('failing', {});
    expect(out).toMatchObject({ status: 'FAILED', error: 'PlateNotFoundError', cause });
  });

  it('aborts on StopExecution, answering requests while the task still runs', async () => {
    calls.length = 0;
    releaseSlow = [];
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machineArn('slow'), input: '{}' }),
    );
    await untilSlowStarted(1);
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');

    await sfn.send(new StopExecutionCommand({ executionArn, error: 'Cancelled', cause: 'by test' }));
    releaseSlow[0]?.();
    await stack.idle();

    expect(await sfn.send(new DescribeExecutionCommand({ executionArn }))).toMatchObject({
      status: 'ABORTED',
      error: 'Cancelled',
      cause: 'by test',
    });
    expect(callsTo('after')).toHaveLength(0);
  });

  it('reports TIMED_OUT when the execution outlives its TimeoutSeconds', async () => {
    releaseSlow = [];
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machineArn('deadline'), input: '{}' }),
    );
    await untilSlowStarted(1);
    await untilEnded(executionArn);
    releaseSlow[0]?.();
    await stack.idle();
    expect(await sfn.send(new DescribeExecutionCommand({ executionArn }))).toMatchObject({
      status: 'TIMED_OUT',
      error: 'States.Timeout',
    });
  });

  it("fails a Task with States.Timeout once it outlives the state's TimeoutSeconds", async () => {
    releaseSlow = [];
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machineArn('task-deadline'), input: '{}' }),
    );
    await untilSlowStarted(1);
    await untilEnded(executionArn);
    releaseSlow[0]?.();
    await stack.idle();
    const done = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!).failure).toMatchObject({ Error: 'States.Timeout' });
  });

  it("counts a Task's TimeoutSeconds from when its run starts, not while it waits for an instance", async () => {
    expect(await run('queued-deadline', {})).toMatchObject({ status: 'SUCCEEDED', output: '"ran"' });
  });

  it('fails the execution with States.DataLimitExceeded for a result over 256 KB, past any Catch', async () => {
    const fallbacks = callsTo('fallback').length;
    const within = await run('oversized', { size: 262_144 - 2 }); // its JSON: the string and two quotes
    expect(within.status).toBe('SUCCEEDED');
    const over = await run('oversized', { size: 262_144 - 1 });
    expect(over).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    expect(over.cause).toContain("'Big'");
    expect(callsTo('fallback')).toHaveLength(fallbacks);
    await expect(
      sfn.send(
        new StartExecutionCommand({
          stateMachineArn: machineArn('oversized'),
          input: JSON.stringify({ size: 1, pad: 'x'.repeat(262_144) }),
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidExecutionInput' });
  });

  it('raises ExecutionDoesNotExist and StateMachineDoesNotExist like AWS', async () => {
    await expect(
      sfn.send(
        new DescribeExecutionCommand({
          executionArn: 'arn:aws:states:us-east-1:000000000000:execution:pipeline:nope',
        }),
      ),
    ).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn: machineArn('nope'), input: '{}' })),
    ).rejects.toBeInstanceOf(StateMachineDoesNotExist);
  });

  it('treats StartExecution by name as idempotent while running, and the name as taken afterwards', async () => {
    releaseSlow = [];
    const start = (input: string) =>
      sfn.send(new StartExecutionCommand({ stateMachineArn: machineArn('slow'), name: 'job-42', input }));
    const first = await start('{"job":42}');
    const again = await start('{"job":42}');
    expect(again.executionArn).toBe(first.executionArn);
    expect(again.startDate).toEqual(first.startDate);
    expect(first.executionArn).toBe('arn:aws:states:us-east-1:000000000000:execution:slow:job-42');
    await expect(start('{"job":43}')).rejects.toBeInstanceOf(ExecutionAlreadyExists);

    await untilSlowStarted(1);
    releaseSlow[0]?.();
    await stack.idle();
    await expect(start('{"job":42}')).rejects.toBeInstanceOf(ExecutionAlreadyExists);

    const listed = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn: machineArn('slow'), statusFilter: 'SUCCEEDED' }),
    );
    expect(listed.executions?.map((e) => e.name)).toEqual(['job-42']);
  });
});

describe('startLocalStepFunctions (Express, and one machine starting another)', () => {
  const counted: string[] = [];
  const express = {
    StartAt: 'Count',
    States: {
      Count: { Type: 'Task', Resource: fn('count-run'), ResultPath: null, Next: 'HandOff' },
      HandOff: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution',
        Parameters: {
          StateMachineArn: machineArn('later'),
          'Name.$': "States.Format('{}-later', $$.Execution.Name)",
          Input: { 'from.$': '$$.Execution.Name' },
        },
        Retry: [{ ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException'], MaxAttempts: 0 }],
        Catch: [{ ErrorEquals: ['StepFunctions.ExecutionAlreadyExistsException'], Next: 'Taken' }],
        End: true,
      },
      Taken: { Type: 'Succeed' },
    },
  };
  const later = {
    StartAt: 'Wait',
    States: {
      Wait: { Type: 'Wait', Seconds: 3600, Next: 'Later' },
      Later: { Type: 'Task', Resource: fn('later'), End: true },
    },
  };
  let stack: Awaited<ReturnType<typeof startLocalStepFunctions>>;
  let sfn: SFNClient;
  beforeAll(async () => {
    stack = await startLocalStepFunctions({
      stateMachines: { [machineArn('express')]: express, [machineArn('later')]: later },
      types: { [machineArn('express')]: 'EXPRESS' },
      repeatExpressTasks: true,
      retryIntervalScale: 0,
      invoke: async (arn, payload, started) => {
        started();
        counted.push(arn === fn('later') ? `later:${(payload as { from: string }).from}` : 'run');
        return null;
      },
    });
    sfn = clientOf(stack.endpoint);
  });
  afterAll(async () => {
    sfn.destroy();
    await stack.close();
  });

  it('starts another execution for every StartExecution of an Express machine, a repeated name too', async () => {
    const start = () =>
      sfn.send(
        new StartExecutionCommand({ stateMachineArn: machineArn('express'), name: 'job-7-1', input: '{}' }),
      );
    const [first, second] = [await start(), await start()];
    expect(first.executionArn).not.toBe(second.executionArn);
    expect(first.executionArn).toMatch(/^arn:aws:states:us-east-1:000000000000:express:express:job-7-1:/);
    await stack.idle();
    // Each task of each run ran twice (at least once, as Express promises), and the Standard machine they
    // both handed over to, by one name, ran once.
    expect(counted.filter((call) => call === 'run')).toHaveLength(4);
    expect(counted.filter((call) => call.startsWith('later:'))).toEqual(['later:job-7-1']);
  });

  it('answers DescribeExecution, StopExecution and ListExecutions of Express as AWS does: not supported', async () => {
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machineArn('express'), input: '{}' }),
    );
    await stack.idle();
    await expect(sfn.send(new DescribeExecutionCommand({ executionArn }))).rejects.toMatchObject({
      name: 'InvalidArn',
    });
    await expect(sfn.send(new StopExecutionCommand({ executionArn }))).rejects.toMatchObject({
      name: 'InvalidArn',
    });
    await expect(
      sfn.send(new ListExecutionsCommand({ stateMachineArn: machineArn('express') })),
    ).rejects.toMatchObject({ name: 'StateMachineTypeNotSupported' });
  });
});

describe('startLocalStepFunctions (definitions it cannot run faithfully)', () => {
  it('refuses JSONata and Assign instead of silently ignoring them', async () => {
    const invoke = async () => null;
    const withAssign = {
      StartAt: 'A',
      States: { A: { Type: 'Pass', Assign: { jobId: 'j1' }, End: true } },
    };
    const withJsonata = {
      QueryLanguage: 'JSONata',
      StartAt: 'A',
      States: { A: { Type: 'Pass', End: true } },
    };
    await expect(
      startLocalStepFunctions({ stateMachines: { [machineArn('a')]: withAssign }, invoke }),
    ).rejects.toThrow("state 'A' uses Assign");
    await expect(
      startLocalStepFunctions({ stateMachines: { [machineArn('j')]: withJsonata }, invoke }),
    ).rejects.toThrow('JSONata is not supported');
  });
});

describe('startLocalStepFunctions with a state file', () => {
  it('after the process dies, remembers finished executions and runs the running ones again from their start', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'local-sfn-state-'));
    const stateFile = join(dir, 'executions.jsonl');
    const machine = machineArn('once');
    const stateMachines = {
      [machine]: { StartAt: 'Work', States: { Work: { Type: 'Task', Resource: fn('work'), End: true } } },
    };
    // The first process: one execution finishes, the other hangs in its task when the process "dies".
    const first = await startLocalStepFunctions({
      stateMachines,
      stateFile,
      invoke: async (_arn, payload) =>
        (payload as { hang?: boolean }).hang ? new Promise(() => undefined) : { done: payload },
    });
    const sfn1 = clientOf(first.endpoint);
    const execution = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:once:${name}`;
    await sfn1.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'quick', input: '{"n":1}' }));
    await sfn1.send(
      new StartExecutionCommand({ stateMachineArn: machine, name: 'slow', input: '{"hang":true}' }),
    );
    // The first process has recorded both: `quick` ended, `slow` hangs in its task.
    const described = (name: string) =>
      sfn1.send(new DescribeExecutionCommand({ executionArn: execution(name) }));
    expect(
      (
        await eventually(
          () => described('quick'),
          (e) => e.status !== 'RUNNING',
        )
      ).status,
    ).toBe('SUCCEEDED');
    expect((await described('slow')).status).toBe('RUNNING');

    // The second process reads the file back (the first one is never closed before: as after kill -9).
    const ran: unknown[] = [];
    const second = await startLocalStepFunctions({
      stateMachines,
      stateFile,
      invoke: async (_arn, payload) => {
        ran.push(payload);
        return { resumed: true };
      },
    });
    const sfn2 = clientOf(second.endpoint);
    expect((await sfn2.send(new DescribeExecutionCommand({ executionArn: execution('quick') }))).status).toBe(
      'SUCCEEDED',
    );
    await expect(
      sfn2.send(new StartExecutionCommand({ stateMachineArn: machine, name: 'quick', input: '{"n":2}' })),
    ).rejects.toThrow(ExecutionAlreadyExists);
    second.resume();
    await second.idle();
    expect(ran).toEqual([{ hang: true }]);
    const slow = await sfn2.send(new DescribeExecutionCommand({ executionArn: execution('slow') }));
    expect(slow).toMatchObject({ status: 'SUCCEEDED', output: '{"resumed":true}' });

    await second.close();
    // The first process's hung task never ends; its server is closed without waiting for it.
    void first.close();
    await rm(dir, { recursive: true, force: true });
  });
});
