import middy from '@middy/core';
import { logger, observability, recordInferenceDuration } from '#aws/observability.ts';
import { cachedRunner } from '#core/use-cases/inference-cache.ts';
import {
  type InferenceResult,
  type OperationRunner,
  runInference,
  type WorkOrder,
} from '#core/use-cases/run-inference.ts';
import { modelKeyOf, onnxOperationRunner } from '#vision/operation-runner.ts';
import { inferenceDeps } from '#wiring/inference.ts';

let runner: OperationRunner | undefined;

/** The container-image function: runs the models for one job (or reuses an identical earlier run). */
export const handler = middy<WorkOrder, InferenceResult>()
  .use(observability((order: WorkOrder) => ({ jobId: order.jobId })))
  .handler(async (order) => {
    const d = inferenceDeps();
    runner ??= cachedRunner(
      onnxOperationRunner({ modelsDir: d.config.MODELS_DIR, threads: d.config.INFERENCE_THREADS }),
      { objects: d.objects, modelKey: modelKeyOf },
    );
    const started = performance.now();
    try {
      return await runInference({ objects: d.objects, runner }, order);
    } finally {
      const milliseconds = Math.round(performance.now() - started);
      recordInferenceDuration(order.operation, milliseconds);
      logger.info('inference finished', { operation: order.operation, duration_ms: milliseconds });
    }
  });
