import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';
import {
  ctcGreedy,
  dbRegions,
  OCR_DET_MEAN,
  OCR_DET_STD,
  OCR_REC_HEIGHT,
  OCR_REC_MAX_WIDTH,
  ocrDetInputSize,
  parseOcrDictionary,
  type Reading,
  type TextRegion,
} from '#vision/math/ocr.ts';
import { SMALL_MODEL_SESSION } from '#vision/models.ts';

/** PP-OCRv4 text detection and recognition on decoded photos; boxes in the photo's pixels. */
export interface TextReader {
  readonly modelVersion: string;
  /** Text regions inside `area` (the whole image by default), its long side read at `maxSide` at most. */
  regions(
    image: DecodedImage,
    options?: { area?: Box; maxSide?: number; upscale?: boolean },
  ): Promise<TextRegion[]>;
  /** The text of one line (a box in the image's pixels). */
  read(image: DecodedImage, box: Box): Promise<Reading>;
}

export interface TextReaderFiles {
  readonly detector: string;
  readonly recogniser: string;
  readonly dictionary: string;
}

/** Loads the three verified files (see `locateModel`); a file that does not load is ModelUnavailableError. */
export async function createTextReader(
  files: TextReaderFiles,
  options: { intraOpNumThreads?: number } = {},
): Promise<TextReader> {
  const sessionOptions: ort.InferenceSession.SessionOptions = {
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    ...SMALL_MODEL_SESSION,
    logSeverityLevel: 3,
    ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
  };
  const load = async (file: string, what: string) => {
    try {
      return await ort.InferenceSession.create(file, sessionOptions);
    } catch (error) {
      throw new ModelUnavailableError(`The text ${what} could not be loaded from ${file}`, { cause: error });
    }
  };
  const [det, rec, dictionary] = await Promise.all([
    load(files.detector, 'detector'),
    load(files.recogniser, 'recogniser'),
    readFile(files.dictionary, 'utf8').then(parseOcrDictionary),
  ]);

  return {
    modelVersion: `${MODELS['ppocr-det'].version}+${MODELS['ppocr-rec'].version}`,
    async regions(image, { area, maxSide = 960, upscale = false } = {}) {
      const crop = clip(area ?? { x: 0, y: 0, w: image.width, h: image.height }, image);
      const input = ocrDetInputSize({ width: crop.w, height: crop.h }, maxSide, upscale);
      const rgb = await pixelsOf(image, crop, input.width, input.height);
      const plane = input.width * input.height;
      const data = new Float32Array(plane * 3);
      for (let p = 0, i = 0; p < plane; p++, i += 3) {
        for (let c = 0; c < 3; c++)
          data[c * plane + p] = (rgb[i + c]! / 255 - OCR_DET_MEAN[c]!) / OCR_DET_STD[c]!;
      }
      const out = await det.run({
        [det.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, input.height, input.width]),
      });
      const map = out[det.outputNames[0]!]!.data as Float32Array;
      const sx = crop.w / input.width;
      const sy = crop.h / input.height;
      return dbRegions(map, input).map(({ box, score }) => ({
        box: { x: crop.x + box.x * sx, y: crop.y + box.y * sy, w: box.w * sx, h: box.h * sy },
        score,
      }));
    },
    async read(image, box) {
      const crop = clip(box, image);
      const width = Math.min(
        OCR_REC_MAX_WIDTH,
        Math.max(16, Math.round((OCR_REC_HEIGHT * crop.w) / crop.h / 8) * 8),
      );
      const rgb = await pixelsOf(image, crop, width, OCR_REC_HEIGHT);
      const plane = width * OCR_REC_HEIGHT;
      const data = new Float32Array(plane * 3);
      for (let p = 0, i = 0; p < plane; p++, i += 3) {
        for (let c = 0; c < 3; c++) data[c * plane + p] = (rgb[i + c]! / 255 - 0.5) / 0.5;
      }
      const out = await rec.run({
        [rec.inputNames[0]!]: new ort.Tensor('float32', data, [1, 3, OCR_REC_HEIGHT, width]),
      });
      const probs = out[rec.outputNames[0]!]!;
      const [, steps, classes] = probs.dims as number[];
      return ctcGreedy(probs.data as Float32Array, steps!, classes!, dictionary);
    },
  };
}

/** Whole pixels inside the image, at least one a side. */
function clip(region: Box, image: { width: number; height: number }): Box {
  const x = Math.min(Math.max(0, Math.floor(region.x)), image.width - 1);
  const y = Math.min(Math.max(0, Math.floor(region.y)), image.height - 1);
  const w = Math.max(1, Math.min(image.width, Math.ceil(region.x + region.w)) - x);
  const h = Math.max(1, Math.min(image.height, Math.ceil(region.y + region.h)) - y);
  return { x, y, w, h };
}

/** The crop resized to width x height, RGB interleaved. */
function pixelsOf(image: DecodedImage, crop: Box, width: number, height: number): Promise<Buffer> {
  const { channels, pixels } = image;
  return sharp(pixels, { raw: { width: image.width, height: image.height, channels } })
    .extract({ left: crop.x, top: crop.y, width: crop.w, height: crop.h })
    .removeAlpha()
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer();
}
