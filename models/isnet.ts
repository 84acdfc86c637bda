import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelUnavailableError } from '#core/errors.ts';
import { deriveIsnetFp32 } from '#models/derive-isnet-fp32.ts';
import { locateModel } from '#models/locate.ts';
import { MODELS } from '#models/manifest.ts';
import { writeVerified } from '#models/write-verified.ts';

/**
 * ISNet is not published as one file: `@imgly/background-removal-data` carries it as content-addressed
 * chunks under `dist/`, each named by its sha256 and listed in order in `dist/resources.json`. Only the
 * joined model file is used, never the package's code (the package is AGPL-3.0, the weights MIT).
 */
const ISNET_PACKAGE = '@imgly/background-removal-data';
/** The resource in `resources.json` that joins into MODELS.isnet (see docs/decisions/0023-isnet-segmenter.md for small vs medium). */
export const ISNET_RESOURCE = '/models/medium';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface EnsureIsnetOptions {
  /** Where the joined file is written when no directory has it yet; `<project>/.cache/models` by default. */
  readonly cacheDir?: string;
  /** The unpacked npm package; resolved from node_modules by default. */
  readonly packageDir?: string;
}

interface ResourceEntry {
  readonly chunks: ReadonlyArray<{ readonly hash: string; readonly offsets: readonly [number, number] }>;
  readonly size: number;
}

const pending = new Map<string, Promise<string>>();

/**
 * The verified ISNet file: the one `locateModel` finds in `searchDirs`, or else one joined now from the
 * npm package into `cacheDir` (which should be among `searchDirs`, as `.cache/models` is by default, so
 * the next call finds it there). ModelUnavailableError names both failures when neither works.
 */
export function ensureIsnetModel(
  searchDirs: readonly string[],
  options: EnsureIsnetOptions = {},
): Promise<string> {
  const cacheDir = path.resolve(options.cacheDir ?? path.join(PROJECT_ROOT, '.cache', 'models'));
  const key = `${cacheDir}\0${searchDirs.join('\0')}`;
  let found = pending.get(key);
  if (!found) {
    found = locateModel('isnet', { searchDirs: [...searchDirs, cacheDir] }).catch(async (notFound) => {
      try {
        return await joinFromPackage(cacheDir, options.packageDir ?? resolvePackageDir());
      } catch (error) {
        throw new ModelUnavailableError(
          `${(notFound as Error).message}; joining it from the npm package ${ISNET_PACKAGE} failed too: ` +
            (error as Error).message,
          { cause: error },
        );
      }
    });
    pending.set(key, found);
    // Only the outcome of one call is shared: a later call looks again (an operator may add the file).
    const forget = () => pending.delete(key);
    found.then(forget, forget);
  }
  return found;
}

const pendingFp32 = new Map<string, Promise<string>>();

/**
 * The verified float32 ISNet the segmenter runs (MODELS['isnet-fp32']): the one `locateModel` finds, or
 * else one derived now (about 1 s and 0.4 GB) from the float16 file, itself joined first when missing,
 * into `cacheDir`, where later calls and processes find it. The inference image has it in /opt/models.
 */
export function ensureIsnetFp32Model(
  searchDirs: readonly string[],
  options: EnsureIsnetOptions = {},
): Promise<string> {
  const cacheDir = path.resolve(options.cacheDir ?? path.join(PROJECT_ROOT, '.cache', 'models'));
  const key = `${cacheDir}\0${searchDirs.join('\0')}`;
  let found = pendingFp32.get(key);
  if (!found) {
    found = locateModel('isnet-fp32', { searchDirs: [...searchDirs, cacheDir] }).catch(async (notFound) => {
      const source = await ensureIsnetModel(searchDirs, options);
      try {
        const target = path.join(cacheDir, MODELS['isnet-fp32'].file);
        await writeVerified(MODELS['isnet-fp32'], target, deriveIsnetFp32(await readFile(source)), source);
        return target;
      } catch (error) {
        throw new ModelUnavailableError(
          `${(notFound as Error).message}; deriving it from ${source} failed too: ${(error as Error).message}`,
          { cause: error },
        );
      }
    });
    pendingFp32.set(key, found);
    const forget = () => pendingFp32.delete(key);
    found.then(forget, forget);
  }
  return found;
}

function resolvePackageDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve(`${ISNET_PACKAGE}/package.json`));
}

/**
 * Streams the chunks in order into a temporary file beside the target, checking each chunk's length
 * against its offsets and the whole against the manifest's sha256, then renames it into place: a reader
 * never sees a partial file, and two processes doing this at once both end with the same good file.
 */
export async function joinFromPackage(cacheDir: string, packageDir: string): Promise<string> {
  const model = MODELS.isnet;
  const dist = path.join(packageDir, 'dist');
  const resources = JSON.parse(await readFile(path.join(dist, 'resources.json'), 'utf8')) as Record<
    string,
    ResourceEntry | undefined
  >;
  const entry = resources[ISNET_RESOURCE];
  if (!entry) throw new Error(`${dist}/resources.json lists no ${ISNET_RESOURCE}`);
  if (entry.size !== model.bytes) {
    throw new Error(
      `${ISNET_RESOURCE} is ${entry.size} bytes in the package, the manifest expects ${model.bytes}`,
    );
  }
  await mkdir(cacheDir, { recursive: true });
  const target = path.join(cacheDir, model.file);
  const temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const digest = createHash('sha256');
  const file = await open(temp, 'w');
  try {
    let written = 0;
    for (const chunk of entry.chunks) {
      const [from, to] = chunk.offsets;
      if (from !== written || !/^[0-9a-f]{64}$/.test(chunk.hash)) {
        throw new Error(`${ISNET_RESOURCE} chunk ${chunk.hash} at ${from} does not follow on at ${written}`);
      }
      const bytes = await readFile(path.join(dist, chunk.hash));
      if (bytes.length !== to - from) {
        throw new Error(`chunk ${chunk.hash} is ${bytes.length} bytes, resources.json says ${to - from}`);
      }
      digest.update(bytes);
      await file.write(bytes);
      written = to;
    }
    await file.close();
    const actual = digest.digest('hex');
    if (written !== model.bytes || actual !== model.sha256) {
      throw new Error(`the joined file has sha256 ${actual} (${written} bytes), expected ${model.sha256}`);
    }
    await rename(temp, target);
    return target;
  } catch (error) {
    await file.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
}
