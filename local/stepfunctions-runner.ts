/**
 * aws-local-stepfunctions as ./stepfunctions.ts runs it: the definitions it accepts (the parts the library
 * runs as AWS does; anything else is refused at start, never run differently), how a failed Lambda looks to
 * it, and the `Promise.withResolvers` it needs on Node 20.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

type State = Record<string, unknown>;

export const LAMBDA_INVOKE = /^arn:aws[\w-]*:states:[^:]*:[^:]*:lambda:invoke$/;
/** Starting another execution, request-response only: Express allows no `.sync` or callback. */
export const START_EXECUTION = /^arn:aws[\w-]*:states:[^:]*:[^:]*:states:startExecution$/;

export type WorkflowType = 'STANDARD' | 'EXPRESS';
/** An Express execution runs five minutes at most, whatever its definition says. */
const EXPRESS_LIMIT_SECONDS = 300;
// The library reads none of these: running a definition that uses them would silently do something else.
const UNSUPPORTED = [
  'Assign',
  'Arguments',
  'Output',
  'ItemReader',
  'ItemBatcher',
  'ResultWriter',
  'Credentials',
];
const UNSUPPORTED_PREFIX = 'ToleratedFailure';

/** A Task state: the function it invokes, and its TimeoutSeconds. */
export interface Task {
  resource: string;
  timeoutSeconds: number;
}

/** Longer than any task runs, within what setTimeout takes (2^31 - 1 ms). */
const LIBRARY_TASK_TIMEOUT_SECONDS = 2_000_000;

/**
 * Validates a definition once, maps each Task state (nested ones too) to its resource, scales Retry waits
 * and Wait states. An Express one is cut at Express's five minutes.
 */
export function prepare(arn: string, definition: object, scale: number, type: WorkflowType = 'STANDARD') {
  const scaled = structuredClone(definition) as StateMachineDefinition & {
    QueryLanguage?: string;
    TimeoutSeconds?: number;
  };
  if (type === 'EXPRESS')
    scaled.TimeoutSeconds = Math.min(scaled.TimeoutSeconds ?? EXPRESS_LIMIT_SECONDS, EXPRESS_LIMIT_SECONDS);
  const tasks = new Map<string, Task>();
  const fail = (why: string) => {
    throw new Error(`local Step Functions cannot run ${arn} faithfully: ${why}`);
  };
  if (scaled.QueryLanguage === 'JSONata') fail('JSONata is not supported');
  for (const [name, state] of statesOf(scaled)) {
    const entries = [state, ...((state.Catch ?? []) as State[]), ...((state.Choices ?? []) as State[])];
    for (const key of entries.flatMap((entry) => Object.keys(entry))) {
      if (UNSUPPORTED.includes(key) || key.startsWith(UNSUPPORTED_PREFIX))
        fail(`state '${name}' uses ${key}`);
    }
    if (state.QueryLanguage === 'JSONata') fail(`state '${name}' uses JSONata`);
    for (const retrier of (state.Retry ?? []) as { IntervalSeconds?: number; MaxDelaySeconds?: number }[]) {
      retrier.IntervalSeconds = (retrier.IntervalSeconds ?? 1) * scale;
      if (retrier.MaxDelaySeconds !== undefined) retrier.MaxDelaySeconds *= scale;
    }
    if (state.Type === 'Wait' && typeof state.Seconds === 'number') state.Seconds *= scale;
    if (state.Type !== 'Task') continue;
    if (state.TimeoutSecondsPath !== undefined) fail(`state '${name}' uses TimeoutSecondsPath`);
    // Timed by ./stepfunctions.ts from when the function's run starts (a run waiting for a local instance is
    // not yet running, as a throttled invoke waiting in the retrier is not in AWS), so the library's own timer
    // is set past any run. Without a TimeoutSeconds AWS waits for the Lambda, which stops by 900 s.
    const timeoutSeconds = (state.TimeoutSeconds as number | undefined) ?? 900;
    state.TimeoutSeconds = LIBRARY_TASK_TIMEOUT_SECONDS;
    const resource = String(state.Resource);
    if (
      resource.startsWith('arn:aws:states:') &&
      !LAMBDA_INVOKE.test(resource) &&
      !START_EXECUTION.test(resource)
    )
      fail(`state '${name}' uses ${resource}`);
    tasks.set(name, { resource, timeoutSeconds });
  }
  // checkArn off: local definitions may name functions with plain strings, not AWS ARNs.
  return { runner: new StateMachine(scaled, { validationOptions: { checkArn: false } }), tasks };
}

function* statesOf(definition: { States?: Record<string, unknown> }): Generator<[string, State]> {
  for (const [name, state] of Object.entries(definition.States ?? {}) as [string, State][]) {
    yield [name, state];
    for (const branch of (state.Branches ?? []) as object[]) yield* statesOf(branch);
    const processor = (state.ItemProcessor ?? state.Iterator) as object | undefined;
    if (processor) yield* statesOf(processor);
  }
}

/** Shapes a thrown error the way Step Functions sees a failed Lambda: Error = errorType, Cause = Lambda's JSON. */
export function asLambdaError(err: unknown): Error {
  if (err instanceof Error && isLambdaCause(err.message, err.name)) return err; // shaped already: keep, don't nest
  const errorType = err instanceof Error ? err.name : 'Error';
  const errorMessage = err instanceof Error ? err.message : String(err);
  return Object.assign(new Error(JSON.stringify({ errorType, errorMessage })), { name: errorType });
}

function isLambdaCause(message: string, name: string): boolean {
  try {
    const parsed = JSON.parse(message) as { errorType?: unknown; errorMessage?: unknown };
    return parsed.errorType === name && typeof parsed.errorMessage === 'string';
  } catch {
    return false;
  }
}

/** aws-local-stepfunctions 3 calls Promise.withResolvers (Node 22+) inside every Task state. */
export function installPromiseWithResolvers(): void {
  const P = Promise as PromiseConstructor & { withResolvers?: unknown };
  if (typeof P.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
