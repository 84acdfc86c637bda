import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelUnavailableError } from '#core/errors.ts';
import type { OperationRunner } from '#core/use-cases/run-inference.ts';
import { defaultModelSearchDirs, locateModel } from '#models/locate.ts';
import { hidePlates } from './operations/hide-plates.ts';
import { createPlateDetector, type PlateDetector } from './plate-detector.ts';

export interface RunnerOptions {
  /** Searched before the default places (`.cache/models`, `../shared/models`, `/opt/models`). */
  modelsDir?: string;
  /** onnxruntime intra-op threads; 0 leaves onnxruntime's own choice. */
  threads?: number;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The models behind each operation, loaded on first use and kept for the life of the process
 * (a Lambda container or a local worker thread), since loading costs far more than one inference.
 */
export function onnxOperationRunner(options: RunnerOptions = {}): OperationRunner {
  const searchDirs = [
    ...(options.modelsDir ? [options.modelsDir] : []),
    ...defaultModelSearchDirs(REPO_ROOT),
  ];
  let detector: Promise<PlateDetector> | undefined;
  const plateDetector = () => {
    detector ??= locateModel('lpd-yunet', { searchDirs }).then((file) =>
      createPlateDetector(file, options.threads ? { intraOpNumThreads: options.threads } : {}),
    );
    // A failed load is not cached: the operator may install the file and the next job should find it.
    detector.catch(() => {
      detector = undefined;
    });
    return detector;
  };

  return {
    async run(operation, input) {
      if (operation === 'plate') {
        const deps = { detector: await plateDetector() };
        const result = await hidePlates(deps, input.source, input.params);
        const extension = result.contentType === 'image/png' ? 'png' : 'jpg';
        return {
          files: [
            {
              name: `result.${extension}`,
              roles: ['url'],
              bytes: result.image,
              contentType: result.contentType,
            },
          ],
          modelVersion: { plate_detector: deps.detector.modelVersion },
          inferenceCached: false,
          platesDetected: result.plates.length,
        };
      }
      throw new ModelUnavailableError(`The ${operation} operation has no model installed in this build`);
    },
  };
}
