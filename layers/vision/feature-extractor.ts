import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { ModelUnavailableError } from '#core/errors.ts';
import { MODELS } from '#models/manifest.ts';
import type { DecodedImage } from '#vision/image-io.ts';
import type { Box } from '#vision/math/geometry.ts';

/** MobileNetV2's last feature map, channel-major (CHW): 1280 x 7 x 7 for a 224 input. */
interface FeatureMap {
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  readonly data: Float32Array;
}

export interface FeatureExtractor {
  readonly modelVersion: string;
  /** The feature map of `region` (the whole image when absent), squeezed to 224x224. */
  extract(image: DecodedImage, region?: Box, options?: ExtractOptions): Promise<FeatureMap>;
}

interface ExtractOptions {
  /** Flip the region horizontally first: the feature map of the mirrored photo, without flipping it all. */
  readonly mirror?: boolean;
}

/**
 * The int8 graph outputs only the 1000 ImageNet logits. Those come from a classifier trained with
 * horizontal flips, so they barely change when a car faces the other way, and left/right views need
 * what the logits pool away. The float feature map exists inside the graph as "627" (the
 * DequantizeLinear that feeds the Shape of the flatten, next to the quantized global pool), so it is
 * exposed as a second graph output when the session is created; the file on disk is unchanged and
 * still verified by its sha256.
 */
const FEATURE_TENSOR = '627';
const INPUT_SIZE = 224;
const MEAN = [0.485, 0.456, 0.406] as const;
const STD = [0.229, 0.224, 0.225] as const;

export interface FeatureExtractorOptions {
  readonly intraOpNumThreads?: number;
}

/** Loads MobileNetV2 int8 from a verified path, with its last feature map exposed; see `locateModel`. */
export async function createFeatureExtractor(
  modelPath: string,
  options: FeatureExtractorOptions = {},
): Promise<FeatureExtractor> {
  let session: ort.InferenceSession;
  try {
    const model = exposeGraphOutput(await readFile(modelPath), FEATURE_TENSOR);
    session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      logSeverityLevel: 3,
      ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
    });
  } catch (error) {
    throw new ModelUnavailableError(`The feature extractor could not be loaded from ${modelPath}`, {
      cause: error,
    });
  }
  if (!session.inputNames.includes('input') || !session.outputNames.includes(FEATURE_TENSOR)) {
    throw new ModelUnavailableError(
      `${modelPath} is not MobileNetV2-12-int8: it takes [${session.inputNames}] and gives [${session.outputNames}]`,
    );
  }
  return {
    modelVersion: MODELS['mobilenetv2-int8'].version,
    async extract(image, region, extractOptions = {}) {
      const input = await toInputTensor(image, region, extractOptions.mirror === true);
      const out = await session.run({ input }, [FEATURE_TENSOR]);
      const tensor = out[FEATURE_TENSOR]!;
      const [, channels, height, width] = tensor.dims.map(Number) as [number, number, number, number];
      if (tensor.dims.length !== 4 || channels !== 1280) {
        throw new ModelUnavailableError(`${modelPath} gave a feature map of shape [${tensor.dims}]`);
      }
      return { channels, height, width, data: tensor.data as Float32Array };
    },
  };
}

/** RGB / 255, ImageNet mean and std, NCHW, the region resized to 224x224 without keeping its aspect. */
async function toInputTensor(
  image: DecodedImage,
  region: Box | undefined,
  mirror: boolean,
): Promise<ort.Tensor> {
  const { width, height, channels, pixels } = image;
  let pipeline = sharp(pixels, { raw: { width, height, channels } }).removeAlpha();
  if (region) {
    const left = Math.max(0, Math.min(width - 1, Math.floor(region.x)));
    const top = Math.max(0, Math.min(height - 1, Math.floor(region.y)));
    pipeline = pipeline.extract({
      left,
      top,
      width: Math.max(1, Math.min(width - left, Math.ceil(region.x + region.w) - left)),
      height: Math.max(1, Math.min(height - top, Math.ceil(region.y + region.h) - top)),
    });
  }
  if (mirror) pipeline = pipeline.flop();
  const rgb = await pipeline.resize(INPUT_SIZE, INPUT_SIZE, { fit: 'fill' }).raw().toBuffer();
  const plane = INPUT_SIZE * INPUT_SIZE;
  const data = new Float32Array(plane * 3);
  for (let i = 0, p = 0; p < plane; p++, i += 3) {
    for (let c = 0; c < 3; c++) data[c * plane + p] = (rgb[i + c]! / 255 - MEAN[c]!) / STD[c]!;
  }
  return new ort.Tensor('float32', data, [1, 3, INPUT_SIZE, INPUT_SIZE]);
}

/**
 * A copy of an ONNX ModelProto whose graph lists `tensor` among its outputs as well. Protocol buffers
 * let a repeated field be appended anywhere in a message, so this appends one `output` entry
 * (GraphProto field 12: ValueInfoProto with a name and a float tensor type) at the end of the graph
 * (ModelProto field 7) and rewrites the graph's length; every other byte is kept.
 */
export function exposeGraphOutput(model: Uint8Array, tensor: string): Uint8Array {
  let offset = 0;
  while (offset < model.length) {
    const fieldStart = offset;
    const [key, afterKey] = readVarint(model, offset);
    const field = key >>> 3;
    const wireType = key & 7;
    offset = afterKey;
    if (wireType === 0) {
      offset = readVarint(model, offset)[1];
    } else if (wireType === 1) {
      offset += 8;
    } else if (wireType === 5) {
      offset += 4;
    } else if (wireType === 2) {
      const [length, start] = readVarint(model, offset);
      const end = start + length;
      if (field === 7) {
        const name = new TextEncoder().encode(tensor);
        // TypeProto { tensor_type: { elem_type: FLOAT } }
        const type = message(2, message(1, Uint8Array.of(0x08, 0x01)));
        const output = message(12, concat(message(1, name), type));
        const graph = concat(model.subarray(start, end), output);
        return concat(model.subarray(0, fieldStart), message(7, graph), model.subarray(end));
      }
      offset = end;
    } else {
      throw new Error(`not an ONNX model: wire type ${wireType} at byte ${fieldStart}`);
    }
  }
  throw new Error('not an ONNX model: no graph');
}

function readVarint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 1;
  let offset = at;
  for (;;) {
    const byte = bytes[offset++];
    if (byte === undefined) throw new Error('not an ONNX model: truncated');
    value += (byte & 0x7f) * shift;
    if (byte < 0x80) return [value, offset];
    shift *= 128;
  }
}

function varint(value: number): Uint8Array {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}

/** A length-delimited field: key, length, payload. */
const message = (field: number, payload: Uint8Array): Uint8Array =>
  concat(varint((field << 3) | 2), varint(payload.length), payload);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
