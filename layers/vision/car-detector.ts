import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import {
  decodeNanodet,
  NANODET_INPUT_SIZE,
  NANODET_STRIDES,
  type NanodetDecodeOptions,
  nanodetLetterbox,
  type ObjectCandidate,
} from '#vision/math/nanodet.ts';
import { type ModelCache, SMALL_MODEL_SESSION } from '#vision/models.ts';

export interface ObjectDetector {
  readonly modelVersion: string;
  /** COCO objects in source-image pixels, best score first. */
  detect(image: DecodedImage, options?: ObjectDetectOptions): Promise<ObjectCandidate[]>;
}

interface ObjectDetectOptions extends Pick<NanodetDecodeOptions, 'scoreThreshold' | 'priors'> {
  /** Look only inside this part of the image (whole pixels); boxes still come in the image's pixels. */
  readonly region?: Box;
}

interface ObjectDetectorOptions {
  readonly intraOpNumThreads?: number;
}

const MEAN_BGR = [103.53, 116.28, 123.675] as const;
const STD_BGR = [57.375, 57.12, 58.395] as const;

/** Loads NanoDet-Plus from a verified path; see `locateModel`. */
async function createCarDetector(
  modelPath: string,
  options: ObjectDetectorOptions = {},
): Promise<ObjectDetector> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      ...SMALL_MODEL_SESSION,
      // The graph lists its initializers as inputs; onnxruntime warns about each one otherwise.
      logSeverityLevel: 3,
      ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
    });
  } catch (error) {
    throw new ModelUnavailableError(`The car detector could not be loaded from ${modelPath}`, {
      cause: error,
    });
  }
  // Outputs come as three score maps (80 wide) then three box maps (32 wide), strides 8, 16, 32.
  const shapeOf = (name: string) => {
    const meta = session.outputMetadata.find((m) => m.name === name);
    return meta?.isTensor ? meta.shape : [];
  };
  const rowsOf = (name: string) => Number(shapeOf(name).at(-2));
  // Finest stride (most rows) first.
  const mapsOfWidth = (width: number) =>
    session.outputNames.filter((n) => shapeOf(n).at(-1) === width).sort((a, b) => rowsOf(b) - rowsOf(a));
  const scoreNames = mapsOfWidth(80);
  const boxNames = mapsOfWidth(32);
  if (
    session.inputNames.length !== 1 ||
    scoreNames.length !== NANODET_STRIDES.length ||
    boxNames.length !== NANODET_STRIDES.length
  ) {
    throw new ModelUnavailableError(
      `${modelPath} is not NanoDet-Plus: it takes [${session.inputNames}] and gives [${session.outputNames}]`,
    );
  }
  const inputName = session.inputNames[0]!;

  return {
    modelVersion: MODELS['nanodet-plus'].version,
    async detect(image, { region, ...detectOptions } = {}) {
      const seen = region ?? { x: 0, y: 0, w: image.width, h: image.height };
      const size = { width: seen.w, height: seen.h };
      const letterbox = nanodetLetterbox(size);
      const out = await session.run({ [inputName]: await toInputTensor(image, letterbox, region) });
      const found = decodeNanodet(
        {
          scores: scoreNames.map((n) => out[n]!.data as Float32Array),
          boxes: boxNames.map((n) => out[n]!.data as Float32Array),
        },
        { ...detectOptions, scale: letterbox.scale, source: size },
      );
      return region
        ? found.map((o) => ({ ...o, box: { ...o.box, x: o.box.x + seen.x, y: o.box.y + seen.y } }))
        : found;
    },
  };
}

/** BGR, (v - mean) / std, NCHW, the image at the top-left of a black 416x416 canvas. */
async function toInputTensor(
  image: DecodedImage,
  letterbox: { width: number; height: number },
  region: Box | undefined,
): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  const source = sharp(pixels, { raw: { width, height, channels } });
  if (region) source.extract({ left: region.x, top: region.y, width: region.w, height: region.h });
  const rgb = await source
    .removeAlpha()
    .resize(letterbox.width, letterbox.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  const side = NANODET_INPUT_SIZE;
  const plane = side * side;
  const data = new Float32Array(plane * 3);
  for (let c = 0; c < 3; c++) data.fill(-MEAN_BGR[c]! / STD_BGR[c]!, c * plane, (c + 1) * plane);
  for (let y = 0; y < letterbox.height; y++) {
    for (let x = 0; x < letterbox.width; x++) {
      const i = (y * letterbox.width + x) * 3;
      const p = y * side + x;
      data[p] = (rgb[i + 2]! - MEAN_BGR[0]) / STD_BGR[0];
      data[plane + p] = (rgb[i + 1]! - MEAN_BGR[1]) / STD_BGR[1];
      data[2 * plane + p] = (rgb[i]! - MEAN_BGR[2]) / STD_BGR[2];
    }
  }
  return new ort.Tensor('float32', data, [1, 3, side, side]);
}

/** NanoDet-Plus, loaded once per process; every operation that looks for vehicles shares it. */
export const carDetector = (models: ModelCache): Promise<ObjectDetector> =>
  models.get('car-detector', 'nanodet-plus', (file) =>
    createCarDetector(file, { intraOpNumThreads: models.threads }),
  );
