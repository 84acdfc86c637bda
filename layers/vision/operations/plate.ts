import { extensionOf } from '#core/images.ts';
import type { OperationInput, OperationResult } from '#core/ports.ts';
import { locateModel } from '#models/locate.ts';
import { carDetector } from '../car-detector.ts';
import type { ModelCache } from '../models.ts';
import { createPlateDetector, type PlateDetector } from '../plate-detector.ts';
import { createTextReader, type TextReader } from '../text-reader.ts';
import { type HidePlatesResult, hidePlates } from './hide-plates.ts';

/** PP-OCRv4's detector, recogniser and dictionary; any of them missing is ModelUnavailableError. */
export const textReader = (models: ModelCache): Promise<TextReader> =>
  models.get('text-reader', 'ppocr-det', async (detector) =>
    createTextReader(
      {
        detector,
        recogniser: await locateModel('ppocr-rec', { searchDirs: models.searchDirs }),
        dictionary: await locateModel('ppocr-keys', { searchDirs: models.searchDirs }),
      },
      { intraOpNumThreads: models.threads },
    ),
  );

/** LPD-YuNet alone: its single pass is what the analysis head was fitted on (`PlateDetector.detect`). */
export const lpdDetector = (models: ModelCache): Promise<PlateDetector> =>
  models.get('lpd-detector', 'lpd-yunet', (file) =>
    createPlateDetector(file, { intraOpNumThreads: models.threads }),
  );

/** LPD-YuNet with both helpers: NanoDet's cars to look inside, and the text signal. */
export const plateDetector = (models: ModelCache): Promise<PlateDetector> =>
  models.get('plate-detector', 'lpd-yunet', async (file) =>
    createPlateDetector(file, {
      intraOpNumThreads: models.threads,
      carDetector: await carDetector(models),
      textReader: await textReader(models),
    }),
  );

/** `plate`: every detected plate filled with the plate colour. */
export async function plateOperation(models: ModelCache, input: OperationInput): Promise<OperationResult> {
  const detector = await plateDetector(models);
  const result = await hidePlates({ detector }, input.source, input.params);
  return plateOutput(result, { plate_detector: detector.modelVersion });
}

/** What `plate` gives for its job: the filled photo, and where the plates were. */
export function plateOutput(result: HidePlatesResult, modelVersion: Record<string, string>): OperationResult {
  return {
    files: [
      {
        name: `result.${extensionOf(result.contentType)}`,
        roles: ['url'],
        bytes: result.image,
        contentType: result.contentType,
      },
    ],
    modelVersion,
    inferenceCached: false,
    plates: result.platesInResult,
  };
}
