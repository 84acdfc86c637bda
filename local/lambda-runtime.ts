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

const modules = new Map<string, Promise<Handler>>();

/** Import a handler module once, as Lambda does per container, from its repo-relative (or absolute) path. */
export function loadHandler(repoRoot: string, handlerPath: string): Promise<Handler> {
  let loaded = modules.get(handlerPath);
  if (!loaded) {
    loaded = import(pathToFileURL(path.resolve(repoRoot, handlerPath)).href).then((module) => {
      if (typeof module.handler !== 'function') throw new Error(`${handlerPath} exports no handler`);
      return module.handler as Handler;
    });
    modules.set(handlerPath, loaded);
  }
  return loaded;
}
