import { deps } from '#aws/wiring.ts';
import { type InferenceResult, runInference } from '#core/use-cases/run-inference.ts';
import type { WorkOrder } from '#core/use-cases/run-workflow.ts';
import { onnxOperationRunner } from '#vision/operation-runner.ts';

let runner: ReturnType<typeof onnxOperationRunner> | undefined;

/** The container-image function: runs the models for one job and stores what they produce. */
export const handler = async (order: WorkOrder): Promise<InferenceResult> => {
  const d = deps();
  runner ??= onnxOperationRunner({ modelsDir: d.config.MODELS_DIR, threads: d.config.INFERENCE_THREADS });
  return runInference({ objects: d.objects, runner }, order);
};
