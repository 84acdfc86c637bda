import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS, type ModelId, type ModelManifest } from '#models/manifest.ts';

export interface LocateOptions {
  /** Looked in, in order; the first file whose checksum matches wins. */
  readonly searchDirs: readonly string[];
}

/** Where model files are looked for when nothing is configured; callers may put a configured dir first. */
export function defaultModelSearchDirs(projectRoot: string): string[] {
  return [
    path.resolve(projectRoot, '.cache', 'models'),
    path.resolve(projectRoot, '..', 'shared', 'models'),
    '/opt/models',
  ];
}

/**
 * The directories inside installed npm dependencies that hold model files as they are (`npmFile` in the
 * manifest), searched last by a running service: in development and tests the files are used where npm
 * put them, verified like any other. A package that is not installed adds nothing.
 */
export function npmModelDirs(): string[] {
  const require = createRequire(import.meta.url);
  const dirs = new Set<string>();
  for (const model of Object.values(MODELS) as ModelManifest[]) {
    const file = model.npmFile && npmModelFile(model.npmFile, require);
    if (file) dirs.add(path.dirname(file));
  }
  return [...dirs];
}

/**
 * Where `<package>/<path>` is installed, or null: looked up along node's module paths, since a package's
 * `exports` may hide both its package.json and its files from `require.resolve`.
 */
export function npmModelFile(
  npmFile: NonNullable<ModelManifest['npmFile']>,
  require = createRequire(import.meta.url),
): string | null {
  for (const modules of require.resolve.paths(npmFile.package) ?? []) {
    const file = path.join(modules, npmFile.package, npmFile.path);
    if (existsSync(file)) return file;
  }
  return null;
}

/** Absolute path of the verified file for a model of the manifest; ModelUnavailableError otherwise. */
export function locateModel(id: ModelId, options: LocateOptions): Promise<string> {
  return locateModelFile(MODELS[id], options);
}

type ManifestEntry = Pick<ModelManifest, 'id' | 'name' | 'file' | 'sha256' | 'bytes'>;

export async function locateModelFile(model: ManifestEntry, options: LocateOptions): Promise<string> {
  const expected = model.sha256.toLowerCase();
  const refused: string[] = [];
  for (const dir of options.searchDirs) {
    const candidate = path.resolve(dir, model.file);
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(candidate);
    } catch {
      continue;
    }
    if (!info.isFile()) {
      refused.push(`${candidate} is not a regular file`);
      continue;
    }
    if (model.bytes !== undefined && info.size !== model.bytes) {
      refused.push(`${candidate} has the wrong checksum (size ${info.size} bytes, expected ${model.bytes})`);
      continue;
    }
    let actual: string;
    try {
      actual = await sha256Of(candidate, info.size, info.mtimeMs);
    } catch (error) {
      refused.push(`${candidate} could not be read (${(error as Error).message})`);
      continue;
    }
    if (actual === expected) return candidate;
    refused.push(`${candidate} has the wrong checksum (sha256 ${actual})`);
  }
  const looked = options.searchDirs.map((d) => path.resolve(d)).join(', ');
  throw new ModelUnavailableError(
    `Model ${model.id} (${model.name}) is unavailable: no ${model.file} with sha256 ${expected} in ` +
      `[${looked}]${refused.length > 0 ? `; refused: ${refused.join('; ')}` : ''}`,
  );
}

// A warm process checks the same file on every use; hashing ~90 MB each time would dominate small jobs.
const hashes = new Map<string, Promise<string>>();

function sha256Of(file: string, size: number, mtimeMs: number): Promise<string> {
  const key = `${file}\0${size}\0${mtimeMs}`;
  let hash = hashes.get(key);
  if (!hash) {
    const digest = createHash('sha256');
    hash = pipeline(createReadStream(file), digest).then(() => digest.digest('hex'));
    hashes.set(key, hash);
    hash.catch(() => hashes.delete(key));
  }
  return hash;
}
