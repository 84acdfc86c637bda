import { ModelUnavailableError } from '#core/errors.ts';
import { OPERATION_REGISTRY, type Operation } from '#core/jobs/operations.ts';
import type { OperationInput, OperationResult, OperationRunner } from '#core/ports.ts';
import { HEADS, MODELS, type ModelId } from '#models/manifest.ts';
import { type ModelCache, type ModelOptions, modelCache } from './models.ts';
import { analyzeOperation } from './operations/analyze.ts';
import { backgroundOperation, studioBackgroundOperation } from './operations/background.ts';
import { backgroundMaskOperation, plateMaskOperation } from './operations/masks.ts';
import { plateOperation } from './operations/plate.ts';

type OperationImpl = (models: ModelCache, input: OperationInput) => Promise<OperationResult>;

/**
 * One module per operation under ./operations. Total over the registry (layers/core/jobs/operations.ts), so
 * that an operation added there fails the typecheck here until it has its implementation (CONTRIBUTING.md,
 * Add an operation).
 */
const IMPLEMENTATIONS: Record<Operation, OperationImpl> = {
  plate: plateOperation,
  background: backgroundOperation,
  studio_background: studioBackgroundOperation,
  plate_mask: plateMaskOperation,
  background_mask: backgroundMaskOperation,
  analyze: analyzeOperation,
};

/** The model files each operation's output depends on, as the registry names them. */
function modelsUsedBy(operation: Operation): readonly ModelId[] {
  const ids = OPERATION_REGISTRY[operation].models;
  for (const id of ids) {
    if (!(id in MODELS))
      throw new Error(`The ${operation} operation names ${id}, which models/manifest.ts lacks`);
  }
  return ids as readonly ModelId[];
}

/**
 * Bump when an operation's own processing changes its output with the same models, so that the
 * inference cache stops serving results made by the old code.
 */
const PIPELINE_VERSION = 15;

/** Identifies the exact model files (and fitted head) behind an operation, for the inference cache. */
export function modelKeyOf(operation: Operation): string {
  const files = modelsUsedBy(operation).map((id) => MODELS[id].sha256);
  // The fitted head reads MobileNet's features: `analyze`, and the background operations' interior check.
  const heads = modelsUsedBy(operation).includes('mobilenetv2-int8') ? [HEADS['analyze-head'].version] : [];
  return [`pipeline-${PIPELINE_VERSION}`, ...files, ...heads].join(':');
}

export function onnxOperationRunner(options: ModelOptions = {}): OperationRunner {
  const models = modelCache(options);
  return {
    run(operation, input) {
      const impl = IMPLEMENTATIONS[operation];
      if (!impl)
        throw new ModelUnavailableError(`The ${operation} operation has no model installed in this build`);
      return impl(models, input);
    },
  };
}
