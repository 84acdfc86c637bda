import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  type RunOptions,
  type StateMachine,
} from 'aws-local-stepfunctions';
import { readText, sendAwsJson } from './aws-json.ts';
import { AccessDeniedError, type Authorizer, accessDeniedJson, accessKeyOf, sfnRequests } from './iam.ts';
import type { Observer } from './observe.ts';
import { type Execution, openJournal, type Status } from './stepfunctions-journal.ts';
import { executionQueries, SfnError, seconds, startedOf } from './stepfunctions-queries.ts';
import {
  asLambdaError,
  installPromiseWithResolvers,
  LAMBDA_INVOKE,
  prepare,
  START_EXECUTION,
  type Task,
  type WorkflowType,
} from './stepfunctions-runner.ts';

type Json = Parameters<StateMachine['run']>[0];
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

const LOCAL_RUNNING_TARGET = 'PhotoJobsLocal.RunningExecutions';

/**
 * The names of the executions running on a local stand-in, of every type, and whether a task still runs:
 * local only (AWS has no such call; the service never makes it), for tests and tools that wait for quiet.
 */
export async function localRunningExecutions(
  endpoint: string,
): Promise<{ running: string[]; invoking: number }> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'x-amz-target': LOCAL_RUNNING_TARGET },
  });
  return (await response.json()) as { running: string[]; invoking: number };
}

/** Step Functions' limit on a state's input or output, and on an execution's input: 256 KB. */
const MAX_STATE_PAYLOAD_BYTES = 262_144;

/** A task that ran past its TimeoutSeconds, under the name Step Functions gives it. */
class StatesTimeout extends Error {
  override name = 'States.Timeout';
  constructor() {
    super('Task timed out.');
  }
}

/** Serves the Step Functions JSON 1.0 API on loopback, running executions with aws-local-stepfunctions. */
export async function startLocalStepFunctions(opts: {
  stateMachines: Record<string, object>;
  /** Each machine's type by ARN; CloudFormation's default, STANDARD, for one not named. */
  types?: Record<string, WorkflowType>;
  /**
   * Runs every Lambda task of an Express execution twice, one run after the other, and goes on with the
   * second's answer (or error): what Express's at-least-once allows, for the tests of the steps' effects.
   */
  repeatExpressTasks?: boolean;
  /**
   * Runs a function; `started` is called when its run starts (a local instance may make it wait first), and
   * the task's TimeoutSeconds counts from then.
   */
  invoke: (resourceArn: string, payload: unknown, started: () => void) => Promise<unknown>;
  retryIntervalScale?: number;
  /**
   * Where executions are recorded (JSON lines). Given, a restart reads it back: finished executions are
   * known again (names stay taken, DescribeExecution answers), and every execution that was running when
   * the process died runs again from its start under its own name: the workflows' steps are written to be
   * repeated. Without it executions live in memory only.
   */
  stateFile?: string;
  /** IAM enforced (local/iam.ts): absent, every signed request is allowed. */
  authorize?: Authorizer;
  /** Told of every API request it accepts (local/observe.ts). */
  observe?: Observer;
}): Promise<{ endpoint: string; close(): Promise<void>; idle(): Promise<void>; resume(): void }> {
  installPromiseWithResolvers();
  const scale = opts.retryIntervalScale ?? 1;
  if (!(scale >= 0 && scale <= 1)) throw new RangeError('retryIntervalScale must be between 0 and 1');
  const typeOf = (arn: string): WorkflowType => opts.types?.[arn] ?? 'STANDARD';
  const machines = new Map(
    Object.entries(opts.stateMachines).map(([arn, def]) => [arn, prepare(arn, def, scale, typeOf(arn))]),
  );
  const known = (arn: string) => (machines.has(arn) ? typeOf(arn) : undefined);
  const journal = openJournal(opts.stateFile, known);
  const { executions, toResume, record } = journal;
  const { find, list, describe } = executionQueries(executions, known);
  const invoking = new Set<Promise<unknown>>();

  /**
   * A state's input or output over 256 KB fails the execution with States.DataLimitExceeded, a terminal
   * error that no Retry or Catch (States.ALL included) handles: the run is stopped, not thrown into.
   */
  function withinDataLimit(exec: Execution, state: string, what: 'an input' | 'a result', data: unknown) {
    const bytes = Buffer.byteLength(JSON.stringify(data ?? null));
    if (bytes <= MAX_STATE_PAYLOAD_BYTES) return;
    const cause = `The state/task '${state}' has ${what} with a size exceeding the maximum number of bytes service limit.`;
    finish(exec, 'FAILED', { error: 'States.DataLimitExceeded', cause });
    exec.abort();
    throw Object.assign(new Error(cause), { name: 'States.DataLimitExceeded' });
  }

  async function runTask(exec: Execution, state: string, task: Task, input: Json): Promise<Json> {
    const { resource } = task;
    // The library re-enters a retried state even after an abort; an aborted run must call nothing.
    if (exec.status !== 'RUNNING')
      throw Object.assign(new Error('execution is no longer running'), { name: 'States.Runtime' });
    withinDataLimit(exec, state, 'an input', input);
    if (START_EXECUTION.test(resource)) return startFromTask(input as StartParameters);
    const integration = LAMBDA_INVOKE.test(resource);
    const { FunctionName, Payload } = integration
      ? (input as { FunctionName: string; Payload?: unknown })
      : { FunctionName: resource, Payload: input };
    if (exec.express && opts.repeatExpressTasks) {
      await invokeOnce(FunctionName, Payload, task).catch(() => undefined);
      if (exec.status !== 'RUNNING')
        throw Object.assign(new Error('execution is no longer running'), { name: 'States.Runtime' });
    }
    try {
      const result = await invokeOnce(FunctionName, Payload, task);
      withinDataLimit(exec, state, 'a result', result);
      return integration ? { ExecutedVersion: '$LATEST', Payload: result, StatusCode: 200 } : result;
    } catch (err) {
      if (exec.status !== 'RUNNING' || err instanceof StatesTimeout) throw err;
      throw asLambdaError(err);
    }
  }

  /** One run of a function, failed with States.Timeout past the task's TimeoutSeconds. */
  async function invokeOnce(FunctionName: string, Payload: unknown, task: Task): Promise<Json> {
    let timer: NodeJS.Timeout | undefined;
    let call!: Promise<unknown>;
    const timedOut = new Promise<never>((_, reject) => {
      const start = () => {
        timer ??= setTimeout(() => reject(new StatesTimeout()), task.timeoutSeconds * 1000);
      };
      call = opts.invoke(FunctionName, Payload ?? {}, start);
    });
    // Held until the run itself ends, a timed-out one too: idle() and close() wait for what still runs.
    invoking.add(call);
    void call.then(
      () => invoking.delete(call),
      () => invoking.delete(call),
    );
    try {
      return ((await Promise.race([call, timedOut])) ?? null) as Json;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The `states:startExecution` integration (request-response): the started execution's ARN and start, or
   * the API's error as Step Functions names it for a task, `StepFunctions.<Error>Exception`.
   */
  function startFromTask(parameters: StartParameters): Json {
    try {
      const { Input } = parameters;
      const started = start({
        stateMachineArn: parameters.StateMachineArn,
        ...(parameters.Name !== undefined ? { name: parameters.Name } : {}),
        ...(Input !== undefined ? { input: typeof Input === 'string' ? Input : JSON.stringify(Input) } : {}),
      });
      return { ExecutionArn: started.executionArn, StartDate: started.startDate ?? null } as Json;
    } catch (error) {
      if (!(error instanceof SfnError)) throw error;
      throw Object.assign(new Error(error.message), { name: `StepFunctions.${error.type}Exception` });
    }
  }

  function start(body: { stateMachineArn?: string; name?: string; input?: string }) {
    const stateMachineArn = String(body.stateMachineArn);
    const machine = machines.get(stateMachineArn);
    if (!machine)
      throw new SfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    const name = body.name ?? randomUUID();
    if (!/^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\p{Cc}]{1,80}$/u.test(name))
      throw new SfnError('InvalidName', `Invalid Name: '${name}'`);
    const input = body.input ?? '{}';
    if (Buffer.byteLength(input) > MAX_STATE_PAYLOAD_BYTES)
      throw new SfnError('InvalidExecutionInput', `Execution input exceeds ${MAX_STATE_PAYLOAD_BYTES} bytes`);
    let parsed: Json;
    try {
      parsed = JSON.parse(input);
    } catch {
      throw new SfnError(
        'InvalidExecutionInput',
        'Invalid State Machine Execution Input: input is not valid JSON',
      );
    }
    const express = typeOf(stateMachineArn) === 'EXPRESS';
    // Express: a name may repeat, and each start is another execution (its ARN ends in an id of its own).
    const executionArn = express
      ? `${stateMachineArn.replace(':stateMachine:', ':express:')}:${name}:${randomUUID()}`
      : `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
    const existing = executions.get(executionArn);
    // AWS: same name and input while RUNNING answers like the first call; otherwise the name is taken.
    if (existing?.status === 'RUNNING' && existing.input === input) return startedOf(existing);
    if (existing) throw new SfnError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);

    const exec: Execution = {
      ...(express ? { express } : {}),
      executionArn,
      stateMachineArn,
      name,
      input,
      status: 'RUNNING',
      startDate: new Date(),
      abort() {},
      settled: Promise.resolve(),
    };
    executions.set(executionArn, exec);
    record({ executionArn, stateMachineArn, name, input, status: 'RUNNING', startDate: exec.startDate });
    launch(exec, machine, parsed);
    return startedOf(exec);
  }

  function launch(exec: Execution, machine: ReturnType<typeof prepare>, parsed: Json): void {
    const { executionArn, stateMachineArn, name } = exec;
    const taskResourceLocalHandlers: TaskHandlers = {};
    for (const [stateName, task] of machine.tasks)
      taskResourceLocalHandlers[stateName] = (i) => runTask(exec, stateName, task, i);
    const run = machine.runner.run(parsed, {
      overrides: { taskResourceLocalHandlers },
      context: {
        Execution: { Id: executionArn, Name: name, StartTime: exec.startDate.toISOString() },
        StateMachine: { Id: stateMachineArn, Name: stateMachineArn.split(':').pop() },
      },
    });
    exec.abort = run.abort;
    exec.settled = run.result.then(
      (output) => finish(exec, 'SUCCEEDED', { output: JSON.stringify(output) }),
      (err: unknown) => {
        if (err instanceof ExecutionTimeoutError)
          return finish(exec, 'TIMED_OUT', { error: 'States.Timeout' });
        if (err instanceof ExecutionAbortedError) return finish(exec, 'ABORTED', {});
        const failure =
          err instanceof ExecutionError && err.cause instanceof Error ? err.cause : (err as Error);
        finish(exec, 'FAILED', { error: failure.name, cause: failure.message });
      },
    );
  }

  function finish(exec: Execution, status: Status, details: Pick<Execution, 'output' | 'error' | 'cause'>) {
    if (exec.status !== 'RUNNING') return; // already stopped through StopExecution
    Object.assign(exec, { status, stopDate: new Date() }, details);
    record({ executionArn: exec.executionArn, status, stopDate: exec.stopDate, ...details });
    // What the execution history in the console would show: a workflow that breaks must not break silently.
    if (status === 'FAILED' || status === 'TIMED_OUT') {
      console.error(
        `[stepfunctions] ${exec.executionArn} ${status}: ${details.error ?? ''} ${details.cause ?? ''}`,
      );
    }
  }

  function stop(body: { executionArn?: string; error?: string; cause?: string }) {
    return halt(find(body), body);
  }

  function halt(exec: Execution, body: { error?: string; cause?: string } = {}) {
    if (exec.status === 'RUNNING') {
      Object.assign(exec, { status: 'ABORTED', stopDate: new Date(), error: body.error, cause: body.cause });
      record({ executionArn: exec.executionArn, status: 'ABORTED', stopDate: exec.stopDate });
      exec.abort();
    }
    return { stopDate: seconds(exec.stopDate) };
  }

  const operations: Record<string, (body: never) => object> = {
    StartExecution: start,
    DescribeExecution: describe,
    StopExecution: stop,
    ListExecutions: list,
  };

  const server = http.createServer((req, res) => {
    // Not an AWS operation: AWS lists no Express execution, so tests and tools ask the stand-in itself.
    if (req.headers['x-amz-target'] === LOCAL_RUNNING_TARGET) {
      const running = [...executions.values()].filter((e) => e.status === 'RUNNING').map((e) => e.name);
      sendAwsJson(res, 200, { running, invoking: invoking.size });
      return;
    }
    const op = String(req.headers['x-amz-target'] ?? '').replace(/^AWSStepFunctions\./, '');
    readText(req)
      .then(async (text) => {
        const handler = operations[op];
        if (!handler) throw new SfnError('UnknownOperationException', `Unsupported operation: ${op}`);
        const body = JSON.parse(text || '{}');
        const caller = accessKeyOf(req.headers.authorization, req.url ?? '/');
        const denial = await opts.authorize?.(caller, sfnRequests(op, body));
        if (denial) throw new AccessDeniedError(denial);
        opts.observe?.({ service: 'states', caller, operation: op });
        return handler(body as never);
      })
      .then(
        (out) => sendAwsJson(res, 200, out),
        (err: unknown) =>
          err instanceof AccessDeniedError
            ? sendAwsJson(res, 400, accessDeniedJson(err.denial))
            : err instanceof SfnError
              ? sendAwsJson(res, 400, {
                  __type: `com.amazonaws.swf.service.v2.model#${err.type}`,
                  message: err.message,
                })
              : sendAwsJson(res, 500, {
                  __type: 'com.amazonaws.swf.service.v2.model#InternalFailure',
                  message: String(err),
                }),
      );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));

  async function idle(): Promise<void> {
    for (;;) {
      const running = [...executions.values()].filter((e) => e.status === 'RUNNING').map((e) => e.settled);
      if (running.length === 0 && invoking.size === 0) return;
      await Promise.allSettled([...running, ...invoking]);
    }
  }

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /**
     * Run again, from their start, the executions that were running when the last process died. Called
     * by the stack once the functions' configuration (this endpoint among it) is in place.
     */
    resume() {
      for (const exec of toResume.splice(0))
        launch(exec, machines.get(exec.stateMachineArn)!, JSON.parse(exec.input));
    },
    idle,
    async close() {
      journal.close();
      for (const exec of executions.values()) halt(exec);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      // An invoke cannot be cancelled; waiting for it also lets the library clear its task timers.
      await idle();
    },
  };
}

/** The Parameters of a `states:startExecution` task. */
type StartParameters = { StateMachineArn?: string; Name?: string; Input?: unknown };
