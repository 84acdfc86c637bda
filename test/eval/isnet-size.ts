/**
 * Would a smaller ISNet input do (issue 23 point 5)? ISNet's graph is fixed at 1024 x 1024; here a copy of
 * the float32 file has its input and output dimensions rewritten to SIZE and its intermediate shapes
 * dropped, so that onnxruntime infers them again (every layer is a convolution, a pooling or a resize by
 * scale). Both sizes then segment the DAVIS car frames (../shared/eval/extra/masks-davis) the way the
 * service does up to `toPhotoSize` (squeeze, model, specks cleared, cubic upscale and feather), and are
 * measured against the hand-drawn masks: IoU at alpha 128 and boundary F (test/eval/masks-davis.ts), with
 * the time of the model run. Run alone: `nice -n 10 node --import tsx test/eval/isnet-size.ts`
 * (PHOTO_JOBS_ISNET_SIZE=768, PHOTO_JOBS_DAVIS_FRAMES=n for an evenly spread n of the 77 frames).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { locateModel } from '#models/locate.ts';
import { ONNX, parseFields, rewrite, varintField } from '#models/onnx-proto.ts';
import { type DecodedImage, decodeSource } from '#vision/image-io.ts';
import { clearSpecks, type Matte, probabilitiesToAlpha } from '#vision/math/matte.ts';
import { modelCache } from '#vision/models.ts';
import { createIsnetSegmenter, toInputTensor } from '#vision/segmenter.ts';
import { spread } from './backgrounds.ts';
import { boundaryF, iouOf } from './masks-davis.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const davisDir = path.resolve(repoRoot, '..', 'shared', 'eval', 'extra');

/** The float32 ISNet with its 1024 x 1024 input and output rewritten to `size`. */
export function resizedIsnet(model: Buffer, size: number): Buffer {
  const dims = (valueInfo: Buffer) =>
    rewrite(valueInfo, ONNX.VALUE_INFO_TYPE, (type) =>
      rewrite(type, ONNX.TYPE_TENSOR, (tensor) =>
        rewrite(tensor, ONNX.TENSOR_TYPE_SHAPE, (shape) =>
          rewrite(shape, ONNX.SHAPE_DIM, (dim) => {
            const value = parseFields(dim).find((f) => f.field === 1 && f.wire === 0)?.value;
            return value === 1024 ? varintField(1, size) : dim;
          }),
        ),
      ),
    );
  // The upsamplings' target sizes were traced as constants (Resize's `sizes` = Concat(N and C of a Shape,
  // constant H and W)): those constants are scaled with the input.
  const strings = (message: Buffer, field: number) =>
    parseFields(message)
      .filter((f) => f.field === field && f.wire === 2)
      .map((f) => f.payload.toString('utf8'));
  const nodeOf = (payload: Buffer) => ({
    op: strings(payload, ONNX.NODE_OP_TYPE)[0],
    inputs: strings(payload, ONNX.NODE_INPUT),
    outputs: strings(payload, ONNX.NODE_OUTPUT),
  });
  const graphFields = parseFields(parseFields(model).find((f) => f.field === ONNX.MODEL_GRAPH)!.payload);
  const nodes = graphFields.filter((f) => f.field === ONNX.GRAPH_NODE).map((f) => nodeOf(f.payload));
  const sizeInputs = new Set(nodes.filter((n) => n.op === 'Resize').map((n) => n.inputs[3]));
  const hw = new Set(
    nodes.filter((n) => n.op === 'Concat' && sizeInputs.has(n.outputs[0])).flatMap((n) => n.inputs),
  );
  const scaleConstant = (payload: Buffer) =>
    rewrite(payload, ONNX.NODE_ATTRIBUTE, (attribute) =>
      rewrite(attribute, ONNX.ATTRIBUTE_T, (tensor) =>
        rewrite(tensor, ONNX.TENSOR_RAW_DATA, (raw) => {
          const out = Buffer.from(raw);
          for (let i = 0; i + 8 <= out.length; i += 8) {
            const v = Number(out.readBigInt64LE(i));
            if ((v * size) % 1024 !== 0) throw new Error(`size ${v} does not scale to ${size}`);
            out.writeBigInt64LE(BigInt((v * size) / 1024), i);
          }
          return out;
        }),
      ),
    );
  return rewrite(model, ONNX.MODEL_GRAPH, (graph) => {
    const parts: Buffer[] = [];
    for (const f of parseFields(graph)) {
      if (f.field === ONNX.GRAPH_VALUE_INFO && f.wire === 2) continue;
      if (f.field === ONNX.GRAPH_NODE && f.wire === 2) {
        const node = nodeOf(f.payload);
        if (node.op === 'Constant' && hw.has(node.outputs[0] ?? '')) {
          const changed = scaleConstant(f.payload);
          parts.push(Buffer.concat([rawKey(f.field), varint(changed.length), changed]));
          continue;
        }
      }
      if ((f.field === ONNX.GRAPH_INPUT || f.field === ONNX.GRAPH_OUTPUT) && f.wire === 2) {
        const changed = dims(f.payload);
        parts.push(Buffer.concat([rawKey(f.field), varint(changed.length), changed]));
      } else parts.push(f.raw);
    }
    return Buffer.concat(parts);
  });
}

const varint = (v: number) => varintField(0, v).subarray(1);
const rawKey = (field: number) => varint((field << 3) | 2);

async function modelMatte(session: ort.InferenceSession, size: number, image: DecodedImage): Promise<Matte> {
  const out = await session.run({ input: await toInputTensor(image, size) }, ['output']);
  const matte = { width: size, height: size, alpha: probabilitiesToAlpha(out.output!.data as Float32Array) };
  clearSpecks(matte);
  return matte;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const size = Number(process.env.PHOTO_JOBS_ISNET_SIZE ?? 768);
  const models = modelCache({ threads: 2 });
  const file = await locateModel('isnet-fp32', { searchDirs: models.searchDirs });
  const smallFile = path.join(repoRoot, '.cache', `isnet-fp32-${size}.onnx`);
  if (!existsSync(smallFile)) {
    await mkdir(path.dirname(smallFile), { recursive: true });
    await writeFile(smallFile, resizedIsnet(await readFile(file), size));
  }
  const options = {
    intraOpNumThreads: 2,
    graphOptimizationLevel: 'extended' as const,
    enableMemPattern: false,
  };
  const sessions = {
    1024: await ort.InferenceSession.create(file, options),
    [size]: await ort.InferenceSession.create(smallFile, options),
  };
  const upscaler = await createIsnetSegmenter(file, { intraOpNumThreads: 1 });
  const rows = (await readFile(path.join(davisDir, 'masks-davis.csv'), 'utf8')).trim().split('\n').slice(1);
  const frames = spread(rows, Number(process.env.PHOTO_JOBS_DAVIS_FRAMES ?? rows.length));
  const sum = { 1024: { iou: 0, f: 0, s: 0 }, [size]: { iou: 0, f: 0, s: 0 } } as Record<
    number,
    { iou: number; f: number; s: number }
  >;
  for (const row of frames) {
    const [jpg, png] = row.split(',');
    const image = await decodeSource(await readFile(path.join(davisDir, jpg!)));
    const { data } = await sharp(path.join(davisDir, png!))
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true });
    const truth = Uint8Array.from(data, (v) => (v > 127 ? 1 : 0));
    const line: string[] = [path.basename(jpg!)];
    for (const s of [1024, size]) {
      const started = performance.now();
      const small = await modelMatte(sessions[s]!, s, image);
      const seconds = (performance.now() - started) / 1000;
      const matte = await upscaler.toPhotoSize(small, image.width, image.height);
      const iou = iouOf(matte, truth);
      const f = boundaryF(matte, truth);
      sum[s]!.iou += iou;
      sum[s]!.f += f;
      sum[s]!.s += seconds;
      line.push(`${s}: IoU ${iou.toFixed(4)} F ${f.toFixed(4)} ${seconds.toFixed(1)} s`);
    }
    console.log(line.join('  '));
  }
  for (const s of [1024, size]) {
    const n = frames.length;
    console.log(
      `${s}: ${n} frames, mean IoU ${(sum[s]!.iou / n).toFixed(4)}, boundary F ${(sum[s]!.f / n).toFixed(4)}, model run ${(sum[s]!.s / n).toFixed(2)} s a frame`,
    );
  }
}
