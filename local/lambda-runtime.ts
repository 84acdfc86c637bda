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
 * Who calls the stand-ins: each invocation signs its AWS calls with its function's access key id (local/iam.ts),
 * so that the stand-ins evaluate them as that function's role. The clients are module singletons shared by
 * every function in this process, so the key is the current invocation's, looked up at signing time through
 * this hook (layers/aws/clients.ts reads it without importing local/). Outside an invocation: none, so the
 * clients sign with the admin key.
 */
const CALLER_KEY = Symbol('callerAccessKeyId');
const LOCAL_CALLER = Symbol.for('photo-jobs.local.caller-access-key');
(globalThis as { [LOCAL_CALLER]?: () => string | undefined })[LOCAL_CALLER] = () =>
  invocations.getStore()?.[CALLER_KEY] as string | undefined;

/** Each invocation runs in its own store, acting as its function (whose logical id is its access key id). */
const inInvocation =
  (handler: Handler): Handler =>
  (event, context) =>
    invocations.run({ [REQUEST_ID]: context.awsRequestId, [CALLER_KEY]: context.functionName }, () =>
      handler(event, context),
    );

const modules = new Map<string, Promise<Handler>>();

/** Import a handler module once, as Lambda does per container, from its repo-relative (or absolute) path. */
export function loadHandler(repoRoot: string, handlerPath: string): Promise<Handler> {
  let loaded = modules.get(handlerPath);
  if (!loaded) {
    loaded = import(pathToFileURL(path.resolve(repoRoot, handlerPath)).href).then((module) => {
      if (typeof module.handler !== 'function') throw new Error(`${handlerPath} exports no handler`);
      return inInvocation(module.handler as Handler);
    });
    modules.set(handlerPath, loaded);
  }
  return loaded;
}
