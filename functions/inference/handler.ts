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
export const handler = async (order: WorkOrder): Promise<InferenceResult> => {
  const d = inferenceDeps();
  runner ??= cachedRunner(
    onnxOperationRunner({ modelsDir: d.config.MODELS_DIR, threads: d.config.INFERENCE_THREADS }),
    { objects: d.objects, modelKey: modelKeyOf },
  );
  return runInference({ objects: d.objects, runner }, order);
};
