import type { OperationResult } from '#core/use-cases/run-inference.ts';
import { extensionOf } from '#vision/image-io.ts';
import type { ModelCache } from '../models.ts';
import type { OperationInput } from '../operation-input.ts';
import { createPlateDetector, type PlateDetector } from '../plate-detector.ts';
import { hidePlates } from './hide-plates.ts';

export const plateDetector = (models: ModelCache): Promise<PlateDetector> =>
  models.get('plate-detector', 'lpd-yunet', (file) =>
    createPlateDetector(file, { intraOpNumThreads: models.threads }),
  );

/** `plate`: every detected plate filled with the plate colour. */
export async function plateOperation(models: ModelCache, input: OperationInput): Promise<OperationResult> {
  const detector = await plateDetector(models);
  const result = await hidePlates({ detector }, input.source, input.params);
  const extension = extensionOf(result.contentType);
  return {
    files: [
      { name: `result.${extension}`, roles: ['url'], bytes: result.image, contentType: result.contentType },
    ],
    modelVersion: { plate_detector: detector.modelVersion },
    inferenceCached: false,
    platesDetected: result.plates.length,
  };
}
