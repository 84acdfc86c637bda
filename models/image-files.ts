/**
 * The model files the inference image carries, and the two steps around them:
 *   node --import tsx models/image-files.ts prepare [DIR]   copy verified files into DIR (default models/files)
 *   node --import tsx models/image-files.ts verify DIR      check DIR holds every file with its sha256
 * `prepare` runs on the deploying machine (from ../shared/models, .cache/models or the ISNet package);
 * `verify` runs inside the image build, so an image with a missing or altered model never builds.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureIsnetModel } from './isnet.ts';
import { defaultModelSearchDirs, locateModel } from './locate.ts';
import { MODELS, type ModelId } from './manifest.ts';

/** The models an operation uses; alternatives that were measured and not chosen stay out of the image. */
export const IMAGE_MODELS: readonly ModelId[] = ['lpd-yunet', 'nanodet-plus', 'mobilenetv2-int8', 'isnet'];

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function prepareImageFiles(target: string): Promise<string[]> {
  const searchDirs = defaultModelSearchDirs(PROJECT_ROOT);
  await mkdir(target, { recursive: true });
  const copied: string[] = [];
  for (const id of IMAGE_MODELS) {
    const source =
      id === 'isnet' ? await ensureIsnetModel(searchDirs) : await locateModel(id, { searchDirs });
    const destination = path.join(target, MODELS[id].file);
    await copyFile(source, destination);
    copied.push(destination);
  }
  return copied;
}

export async function verifyImageFiles(dir: string): Promise<void> {
  for (const id of IMAGE_MODELS) await locateModel(id, { searchDirs: [dir] });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, dir] = process.argv.slice(2);
  try {
    if (command === 'prepare') {
      for (const file of await prepareImageFiles(
        path.resolve(dir ?? path.join(PROJECT_ROOT, 'models', 'files')),
      )) {
        console.log(`copied ${file}`);
      }
    } else if (command === 'verify' && dir) {
      await verifyImageFiles(path.resolve(dir));
      console.log(`all ${IMAGE_MODELS.length} model files in ${dir} match their manifests`);
    } else {
      console.error('usage: models/image-files.ts prepare [DIR] | verify DIR');
      process.exit(2);
    }
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
