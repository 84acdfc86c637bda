import middy from '@middy/core';
import { recordInferenceDuration } from '#aws/metrics.ts';
import { logger, observability } from '#aws/observability.ts';
import { type Config, oncePerConfig } from '#config';
import type { Operation } from '#core/jobs/operations.ts';
import type { OperationRunner } from '#core/ports.ts';
import { cachedRunner } from '#core/use-cases/inference-cache.ts';
import { type InferenceResult, runInference, type WorkOrder } from '#core/use-cases/run-inference.ts';
import { modelKeyOf, onnxOperationRunner } from '#vision/operation-runner.ts';
import { inferenceDeps } from '#wiring/inference.ts';

/** What runs the operations: made once per container, and the identity of its models for the cache. */
export interface VisionEngine {
  runner(config: Config): OperationRunner;
  modelKey(operation: Operation): string;
}

/** The inference function over an engine: one job's run (or the reuse of an identical earlier run). */
export function inferenceHandler(engine: VisionEngine) {
  const runner = oncePerConfig((cfg) =>
    cachedRunner(engine.runner(cfg), { objects: inferenceDeps().objects, modelKey: engine.modelKey }),
  );
  return middy<WorkOrder, InferenceResult>()
    .use(observability((order: WorkOrder) => ({ jobId: order.jobId })))
    .handler(async (order) => {
      const started = performance.now();
      try {
        return await runInference({ objects: inferenceDeps().objects, runner: runner() }, order);
      } finally {
        const milliseconds = Math.round(performance.now() - started);
        recordInferenceDuration(order.operation, milliseconds);
        logger.info('inference finished', { operation: order.operation, duration_ms: milliseconds });
      }
    });
}

/** The container-image function: the ONNX models. */
export const handler = inferenceHandler({
  runner: (config) =>
    onnxOperationRunner({ modelsDir: config.MODELS_DIR, threads: config.INFERENCE_THREADS }),
  modelKey: modelKeyOf,
});
