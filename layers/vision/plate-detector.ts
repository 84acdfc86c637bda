import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import { type Box, type Quad, quadBoundingBox, type Size, scaleQuad } from '#vision/math/geometry.ts';
import {
  decodeLpdYunet,
  LPD_DEFAULT_SCORE_THRESHOLD,
  type LpdInputSizeOptions,
  lpdInputSize,
  lpdPriors,
} from '#vision/math/lpd-yunet.ts';

/** A plate in source-image pixels. */
export interface PlateDetection {
  readonly quad: Quad;
  readonly box: Box;
  readonly score: number;
}

export interface DetectOptions extends LpdInputSizeOptions {
  readonly scoreThreshold?: number;
}

export interface PlateDetector {
  /** Recorded with results so that a change of weights shows. */
  readonly modelVersion: string;
  /** Plates found in the image, best score first; empty when there are none. */
  detect(image: DecodedImage, options?: DetectOptions): Promise<PlateDetection[]>;
}

export interface PlateDetectorOptions extends DetectOptions {
  /** onnxruntime's default is one thread per physical core. */
  readonly intraOpNumThreads?: number;
}

const OUTPUTS = ['loc', 'conf', 'iou'] as const;

/** Loads LPD-YuNet (the dynamic-input file) from a verified path; see `locateModel`. */
export async function createPlateDetector(
  modelPath: string,
  options: PlateDetectorOptions = {},
): Promise<PlateDetector> {
  const { intraOpNumThreads, ...defaults } = options;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }),
    });
  } catch (error) {
    throw new ModelUnavailableError(`The plate detector could not be loaded from ${modelPath}`, {
      cause: error,
    });
  }
  if (!session.inputNames.includes('input') || !OUTPUTS.every((name) => session.outputNames.includes(name))) {
    throw new ModelUnavailableError(
      `${modelPath} is not LPD-YuNet: it takes [${session.inputNames}] and gives [${session.outputNames}]`,
    );
  }

  // Priors depend only on the input size, and photos come in a handful of aspect ratios.
  const priorsBySize = new Map<string, Float32Array>();
  const priorsFor = (size: Size): Float32Array => {
    const key = `${size.width}x${size.height}`;
    let priors = priorsBySize.get(key);
    if (!priors) {
      if (priorsBySize.size >= 32) priorsBySize.clear();
      priors = lpdPriors(size);
      priorsBySize.set(key, priors);
    }
    return priors;
  };

  return {
    modelVersion: MODELS['lpd-yunet'].version,
    async detect(image, detectOptions = {}) {
      const opts = { ...defaults, ...detectOptions };
      const input = lpdInputSize(image, opts);
      const tensor = await toInputTensor(image, input);
      const out = await session.run({ input: tensor });
      const candidates = decodeLpdYunet(
        {
          loc: out.loc!.data as Float32Array,
          conf: out.conf!.data as Float32Array,
          iou: out.iou!.data as Float32Array,
        },
        priorsFor(input),
        { scoreThreshold: opts.scoreThreshold ?? LPD_DEFAULT_SCORE_THRESHOLD },
      );
      return candidates.map(({ quad, score }) => {
        const sourceQuad = scaleQuad(quad, input, image);
        return { quad: sourceQuad, box: quadBoundingBox(sourceQuad), score };
      });
    },
  };
}

/** Resized, BGR, float 0..255, NCHW: what lpd_yunet.py feeds through cv.dnn.blobFromImage. */
async function toInputTensor(image: DecodedImage, size: Size): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  const rgb = await sharp(pixels, { raw: { width, height, channels } })
    .removeAlpha()
    .resize(size.width, size.height, { fit: 'fill' })
    .raw()
    .toBuffer();
  const plane = size.width * size.height;
  const data = new Float32Array(plane * 3);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    data[p] = rgb[i + 2]!;
    data[plane + p] = rgb[i + 1]!;
    data[2 * plane + p] = rgb[i]!;
  }
  return new ort.Tensor('float32', data, [1, 3, size.height, size.width]);
}
