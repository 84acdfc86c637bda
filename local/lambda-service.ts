import path from 'node:path';
import pLimit, { type LimitFunction } from 'p-limit';
import { defaultInferenceWorkers, inferencePool } from './inference-pool.ts';
import { invokeWithin, lambdaContext, loadHandler } from './lambda-runtime.ts';
import type { Observer } from './observe.ts';
import type { LocalFunction } from './template.ts';

/** Runs a function by logical id; `started`: when the run begins, after any wait for a local instance. */
export type InvokeFunction = (functionId: string, payload: unknown, started?: () => void) => Promise<unknown>;

/**
 * The template's functions run as Lambda would run them: the zip functions from their sources (or, for a
 * bundled stack, from the bundles `cdk deploy` would upload), the container-image function in a pool of
 * workers, each with the environment the template gives it.
 */
export async function localLambda(options: {
  repoRoot: string;
  functions: ReadonlyMap<string, LocalFunction>;
  environmentOf: (fn: LocalFunction) => Record<string, string>;
  /** Where a bundled stack keeps its bundles and its cloud assembly; absent, the sources run. */
  bundled?: { dir: string; assemblyDir: string };
  inferenceHandler?: string;
  inferenceWorkers?: number;
  functionInstances: number;
  observe?: Observer;
}): Promise<{ invoke: InvokeFunction; close(): Promise<void> }> {
  const { bundled, observe } = options;
  const modulePath = async (fn: LocalFunction): Promise<string> => {
    if (!bundled) return (fn.image && options.inferenceHandler) || fn.handler;
    if (fn.image) {
      const { bundleInference } = await import('../functions/inference/bundle.ts');
      // Two levels below the repository, as layers/vision/models.ts sits: it finds the same model folders.
      return bundleInference(path.join(bundled.dir, 'inference.mjs'));
    }
    if (!fn.assetHash) throw new Error(`${fn.logicalId} has no bundled asset`);
    return path.join(bundled.assemblyDir, `asset.${fn.assetHash}`, 'index.mjs');
  };

  const imageFunction = [...options.functions.values()].find((fn) => fn.image);
  const pool = imageFunction
    ? inferencePool({
        size: options.inferenceWorkers ?? defaultInferenceWorkers(),
        repoRoot: options.repoRoot,
        handler: await modulePath(imageFunction),
        functionName: imageFunction.logicalId,
        timeoutSeconds: imageFunction.timeoutSeconds,
        environment: () => options.environmentOf(imageFunction),
      })
    : null;
  // In Lambda every invocation has an instance, and so a CPU, to itself. Here all share one process: 200
  // requests at once would each get 1/200 of it and run out of their own timeout (a 500) on a busy machine.
  // A few instances per function, with the rest queued before their clock starts, keep each invocation's
  // time what it would be in AWS; the total work, and so the throughput, is the same.
  const instances = new Map<string, LimitFunction>();
  const instancesOf = (functionId: string) => {
    let limit = instances.get(functionId);
    if (!limit) {
      limit = pLimit(options.functionInstances);
      instances.set(functionId, limit);
    }
    return limit;
  };
  const run: InvokeFunction = async (functionId, payload, started) => {
    const fn = options.functions.get(functionId);
    if (!fn) throw new Error(`No function ${functionId} in the template`);
    if (fn.image && pool) return pool.invoke(payload, started);
    const handler = await loadHandler(options.repoRoot, await modulePath(fn), options.environmentOf(fn));
    return instancesOf(functionId)(() => {
      started?.();
      return invokeWithin(handler, payload, lambdaContext(functionId, fn.timeoutSeconds), fn.timeoutSeconds);
    });
  };
  const invoke: InvokeFunction = !observe
    ? run
    : async (functionId, payload, started) => {
        let from = performance.now();
        try {
          return await run(functionId, payload, () => {
            from = performance.now();
            started?.();
          });
        } finally {
          observe({ service: 'lambda', function: functionId, durationMs: performance.now() - from });
        }
      };
  return {
    invoke,
    /** Drops what the inference pool runs and queues, so that nothing waits for a backlog of inference. */
    close: async () => {
      await pool?.close();
    },
  };
}
