import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultModelSearchDirs, locateModel, npmModelDirs } from '#models/locate.ts';
import type { ModelId } from '#models/manifest.ts';

export interface ModelOptions {
  /**
   * Searched before the default places (`.cache/models`, `../shared/models`, `/opt/models`, then the
   * model files inside installed npm packages).
   */
  modelsDir?: string;
  /**
   * onnxruntime intra-op threads per session; 0 (the default) means every CPU this process may use.
   * onnxruntime's own default is one thread per *physical* core, which leaves hyperthreads idle
   * (docs/decisions/0024-inference-memory-and-threads.md).
   */
  threads?: number;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Loads each model once per process (a Lambda container or a local worker thread) and shares it
 * between operations, since loading costs far more than one inference. A failed load is not kept:
 * an operator may install the file, and the next job should find it.
 */
export function modelCache(options: ModelOptions) {
  const searchDirs = [
    ...(options.modelsDir ? [options.modelsDir] : []),
    ...defaultModelSearchDirs(REPO_ROOT),
    // Last: files an npm dependency ships as they are (the PP-OCRv4 text models), used in place.
    ...npmModelDirs(),
  ];
  const loaded = new Map<string, Promise<unknown>>();
  return {
    searchDirs,
    threads: options.threads || os.availableParallelism(),
    /** The verified file of a model, then `create` over it, memoised under `key`. */
    get<T>(key: string, id: ModelId, create: (file: string) => Promise<T>): Promise<T> {
      let model = loaded.get(key) as Promise<T> | undefined;
      if (!model) {
        model = locateModel(id, { searchDirs }).then(create);
        loaded.set(key, model);
        model.catch(() => loaded.delete(key));
      }
      return model;
    },
  };
}

export type ModelCache = ReturnType<typeof modelCache>;

/**
 * Session options of the plate finder's small models (LPD-YuNet, NanoDet, PP-OCR): their intra-op threads
 * sleep between parallel sections instead of spinning. A photo takes some fifty short runs with sharp's
 * crops and resizes between them, and spinning threads took the cores those need: on 2 cores the same
 * jobs used a fifth less CPU time with the same plates (docs/decisions/0068-the-plate-search-cost.md).
 */
export const SMALL_MODEL_SESSION = {
  extra: { session: { intra_op: { allow_spinning: '0' } } },
} as const;
