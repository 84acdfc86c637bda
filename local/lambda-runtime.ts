import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

export function lambdaContext(functionName: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Lambda's per-invocation store, as its runtime provides it where one instance serves several invocations at
 * once (AWS_LAMBDA_MAX_CONCURRENCY, set by the local stack). Here every function runs concurrent invocations
 * in one process; Powertools keeps each one's log keys (job id, request id) and metrics in this store, so
 * that a log line never carries the ids of another request.
 */
type Store = Record<string | symbol, unknown>;
const invocations = new AsyncLocalStorage<Store>();
const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
const invokeStore = {
  getContext: () => invocations.getStore(),
  hasContext: () => invocations.getStore() !== undefined,
  get: (key: string | symbol) => invocations.getStore()?.[key],
  set(key: string | symbol, value: unknown) {
    const store = invocations.getStore();
    if (!store) throw new Error('No invocation context');
    store[key] = value;
  },
  run: <T>(context: Store, fn: () => T): T => invocations.run(context, fn),
  getRequestId: () => (invocations.getStore()?.[REQUEST_ID] as string | undefined) ?? '-',
  getXRayTraceId: () => undefined,
  getTenantId: () => undefined,
};
const runtimeGlobals = globalThis as { awslambda?: { InvokeStore?: unknown } };
runtimeGlobals.awslambda ??= {};
runtimeGlobals.awslambda.InvokeStore ??= invokeStore;

/**
 * Invocations past their function's timeout, by request id. Their function's role keys are in their
 * environment (function-environment.ts `roleCredentials`), read again at every call; from the timeout on they
 * read a key no role has, so that what such a run would still write is refused (with IAM enforced).
 */
const expired = new Set<string>();
const timedOutEnvironments = new WeakMap<object, NodeJS.ProcessEnv>();
const timedOut = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  let changed = timedOutEnvironments.get(env);
  if (!changed) {
    changed = { ...env, AWS_ACCESS_KEY_ID: `${env.AWS_ACCESS_KEY_ID ?? 'unknown'}-timed-out` };
    timedOutEnvironments.set(env, changed);
  }
  return changed;
};

/**
 * Each function's environment, as Lambda gives each function its own process with the variables of its
 * template entry. Here every function shares one process, so `process.env` reads the current invocation's
 * environment: inside an invocation (and a handler module's first import) the function's own, elsewhere
 * (the stack itself, the CLI, a test seeding data) the process's. Deployed code reads `process.env` as in
 * Lambda; layers/config.ts parses each environment once.
 */
const FUNCTION_ENV = Symbol('functionEnvironment');
const PROCESS_ENV_SCOPED = Symbol.for('photo-jobs.local.process-env-scoped');
const runtimeProcess = process as NodeJS.Process & { [PROCESS_ENV_SCOPED]?: true };
if (!runtimeProcess[PROCESS_ENV_SCOPED]) {
  let processEnv = process.env;
  Object.defineProperty(process, 'env', {
    configurable: true,
    enumerable: true,
    get: () => {
      const store = invocations.getStore();
      const env = (store?.[FUNCTION_ENV] as NodeJS.ProcessEnv | undefined) ?? processEnv;
      return store && expired.has(store[REQUEST_ID] as string) ? timedOut(env) : env;
    },
    set: (value: NodeJS.ProcessEnv) => {
      processEnv = value;
    },
  });
  runtimeProcess[PROCESS_ENV_SCOPED] = true;
}

/** How Step Functions names an unhandled Lambda failure, a function timeout among them. */
export const FUNCTION_FAILED = 'Lambda.Unknown';

/** Lambda's failure of a run past the function's timeout, as the invoke (and Step Functions) sees it. */
export const functionTimedOut = (timeoutSeconds: number): Error =>
  Object.assign(new Error(`Task timed out after ${timeoutSeconds.toFixed(2)} seconds`), {
    name: FUNCTION_FAILED,
  });

/**
 * Each invocation runs in its own store, with its function's environment (its role's keys among it) when one is given.
 */
const inInvocation =
  (handler: Handler, environment?: Record<string, string>): Handler =>
  (event, context) =>
    invocations.run(
      {
        [REQUEST_ID]: context.awsRequestId,
        ...(environment ? { [FUNCTION_ENV]: environment } : {}),
      },
      () => handler(event, context),
    );

const modules = new Map<string, Promise<Handler>>();

/**
 * Import a handler module once, as Lambda does per container, from its repo-relative (or absolute) path.
 * `environment`: the function's variables, which its init and every invocation see as `process.env`.
 */
export function loadHandler(
  repoRoot: string,
  handlerPath: string,
  environment?: Record<string, string>,
): Promise<Handler> {
  let loaded = modules.get(handlerPath);
  if (!loaded) {
    const url = pathToFileURL(path.resolve(repoRoot, handlerPath)).href;
    const imported = environment
      ? invocations.run({ [FUNCTION_ENV]: environment }, () => import(url))
      : import(url);
    loaded = imported.then((module) => {
      if (typeof module.handler !== 'function') throw new Error(`${handlerPath} exports no handler`);
      return inInvocation(module.handler as Handler, environment);
    });
    modules.set(handlerPath, loaded);
  }
  return loaded;
}

/**
 * One invocation that Lambda ends at the function's timeout: the invoke fails as `Lambda.Unknown`, "Task
 * timed out after … seconds". A run in this process cannot be stopped, so from then on its calls to the
 * stand-ins sign with a key no role has, and are refused (with IAM enforced): what it would write after its
 * timeout does not land, as in Lambda, where its instance is gone.
 */
export function invokeWithin(
  handler: Handler,
  event: unknown,
  context: Context,
  timeoutSeconds: number,
): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired.add(context.awsRequestId);
      reject(functionTimedOut(timeoutSeconds));
    }, timeoutSeconds * 1000);
  });
  return Promise.race([handler(event, context), timedOut]).finally(() => clearTimeout(timer));
}
