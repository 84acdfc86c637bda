import { ModelUnavailableError } from '#core/errors.ts';
import type { Operation } from '#core/jobs/job.ts';
import type { OperationResult, OperationRunner } from '#core/use-cases/run-inference.ts';
import { type ModelCache, type ModelOptions, modelCache } from './models.ts';
import { analyzeOperation } from './operations/analyze.ts';
import { backgroundOperation, studioBackgroundOperation } from './operations/background.ts';
import { backgroundMaskOperation, plateMaskOperation } from './operations/masks.ts';
import { plateOperation } from './operations/plate.ts';

export type OperationInput = Parameters<OperationRunner['run']>[1];
type OperationImpl = (models: ModelCache, input: OperationInput) => Promise<OperationResult>;

/** One module per operation under ./operations; an operation without one fails honestly. */
const OPERATIONS: Partial<Record<Operation, OperationImpl>> = {
  plate: plateOperation,
  background: backgroundOperation,
  studio_background: studioBackgroundOperation,
  plate_mask: plateMaskOperation,
  background_mask: backgroundMaskOperation,
  analyze: analyzeOperation,
};

export function onnxOperationRunner(options: ModelOptions = {}): OperationRunner {
  const models = modelCache(options);
  return {
    run(operation, input) {
      const impl = OPERATIONS[operation];
      if (!impl)
        throw new ModelUnavailableError(`The ${operation} operation has no model installed in this build`);
      return impl(models, input);
    },
  };
}
