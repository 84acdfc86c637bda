import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deriveIsnetFp32 } from '#models/derive-isnet-fp32.ts';
import { ensureIsnetFp32Model } from '#models/isnet.ts';
import { MODELS } from '#models/manifest.ts';
import { lengthDelimited, ONNX, parseFields, stringField, varintField } from '#models/onnx-proto.ts';

const text = (field: number, value: string) => lengthDelimited(field, Buffer.from(value, 'utf8'));
const tensorType = (elemType: number) =>
  lengthDelimited(ONNX.VALUE_INFO_TYPE, lengthDelimited(ONNX.TYPE_TENSOR, varintField(1, elemType)));
const valueInfo = (name: string, elemType: number) =>
  Buffer.concat([text(ONNX.VALUE_INFO_NAME, name), tensorType(elemType)]);
const node = (op: string, inputs: string[], outputs: string[], castTo?: number) =>
  Buffer.concat([
    ...inputs.map((i) => text(ONNX.NODE_INPUT, i)),
    ...outputs.map((o) => text(ONNX.NODE_OUTPUT, o)),
    text(ONNX.NODE_OP_TYPE, op),
    ...(castTo === undefined
      ? []
      : [
          lengthDelimited(
            ONNX.NODE_ATTRIBUTE,
            Buffer.concat([text(ONNX.ATTRIBUTE_NAME, 'to'), varintField(ONNX.ATTRIBUTE_I, castTo)]),
          ),
        ]),
  ]);
const halfTensor = (name: string, halves: number[]) =>
  Buffer.concat([
    varintField(1, halves.length),
    varintField(ONNX.TENSOR_DATA_TYPE, ONNX.FLOAT16),
    text(ONNX.TENSOR_NAME, name),
    lengthDelimited(ONNX.TENSOR_RAW_DATA, Buffer.from(new Uint16Array(halves).buffer)),
  ]);

/** float16 bit patterns and the float32 each must become: normal, negative, largest, subnormal, zero, inf. */
const HALVES: Array<[number, number]> = [
  [0x3c00, 1],
  [0xc000, -2],
  [0x7bff, 65504],
  [0x0001, 2 ** -24],
  [0x03ff, 1023 * 2 ** -24],
  [0x8000, -0],
  [0x7c00, Number.POSITIVE_INFINITY],
  [0x3555, 0.333251953125],
];

/** A graph shaped like IMG.LY's: casts to float16 around a Conv, a fused output and a side output. */
function tinyModel(): Buffer {
  const graph = Buffer.concat([
    lengthDelimited(ONNX.GRAPH_NODE, node('Conv', ['x16', 'w'], ['y16'])),
    lengthDelimited(ONNX.GRAPH_NODE, node('Conv', ['y16', 'w_side'], ['side16'])),
    lengthDelimited(ONNX.GRAPH_NODE, node('Cast', ['side16'], ['side'], ONNX.FLOAT)),
    lengthDelimited(ONNX.GRAPH_NODE, node('Cast', ['y16'], ['output'], ONNX.FLOAT)),
    // Appended last, as the float16 converter does.
    lengthDelimited(ONNX.GRAPH_NODE, node('Cast', ['input'], ['x16'], ONNX.FLOAT16)),
    text(2, 'tiny'),
    lengthDelimited(
      ONNX.GRAPH_INITIALIZER,
      halfTensor(
        'w',
        HALVES.map(([h]) => h),
      ),
    ),
    lengthDelimited(ONNX.GRAPH_INITIALIZER, halfTensor('w_side', [0x3c00])),
    lengthDelimited(ONNX.GRAPH_INPUT, valueInfo('input', ONNX.FLOAT)),
    lengthDelimited(ONNX.GRAPH_OUTPUT, valueInfo('output', ONNX.FLOAT)),
    lengthDelimited(ONNX.GRAPH_OUTPUT, valueInfo('side', ONNX.FLOAT)),
    lengthDelimited(ONNX.GRAPH_VALUE_INFO, valueInfo('x16', ONNX.FLOAT16)),
    lengthDelimited(ONNX.GRAPH_VALUE_INFO, valueInfo('y16', ONNX.FLOAT16)),
    lengthDelimited(ONNX.GRAPH_VALUE_INFO, valueInfo('side16', ONNX.FLOAT16)),
  ]);
  return Buffer.concat([varintField(1, 8), lengthDelimited(ONNX.MODEL_GRAPH, graph), text(8, 'opset')]);
}

const fieldsOf = (message: Buffer, field: number) =>
  parseFields(message)
    .filter((f) => f.field === field)
    .map((f) => f.payload);
const elemTypeOf = (info: Buffer) =>
  parseFields(fieldsOf(fieldsOf(info, ONNX.VALUE_INFO_TYPE)[0]!, ONNX.TYPE_TENSOR)[0]!)[0]!.value;

describe('deriveIsnetFp32', () => {
  const derived = Buffer.concat(deriveIsnetFp32(tinyModel()));
  const graph = fieldsOf(derived, ONNX.MODEL_GRAPH)[0]!;

  it('turns every float16 weight into the float32 of the same value, infinities and subnormals included', () => {
    const [w] = fieldsOf(graph, ONNX.GRAPH_INITIALIZER);
    expect(parseFields(w!).find((f) => f.field === ONNX.TENSOR_DATA_TYPE)?.value).toBe(ONNX.FLOAT);
    const raw = fieldsOf(w!, ONNX.TENSOR_RAW_DATA)[0]!;
    const floats = new Float32Array(Uint8Array.from(raw).buffer);
    expect([...floats]).toEqual(HALVES.map(([, value]) => value));
    expect(Object.is(floats[5], -0)).toBe(true);
  });

  it('makes the casts and value types float32 and keeps only the fused output with what it needs', () => {
    const nodes = fieldsOf(graph, ONNX.GRAPH_NODE);
    expect(nodes.map((n) => fieldsOf(n, ONNX.NODE_OUTPUT)[0]!.toString())).toEqual(['y16', 'output', 'x16']);
    const casts = nodes.filter((n) => stringField(n, ONNX.NODE_OP_TYPE) === 'Cast');
    expect(
      casts.map((n) => parseFields(fieldsOf(n, ONNX.NODE_ATTRIBUTE)[0]!).find((f) => f.field === 3)?.value),
    ).toEqual([ONNX.FLOAT, ONNX.FLOAT]);
    expect(fieldsOf(graph, ONNX.GRAPH_INITIALIZER).map((t) => stringField(t, ONNX.TENSOR_NAME))).toEqual([
      'w',
    ]);
    expect(fieldsOf(graph, ONNX.GRAPH_OUTPUT).map((o) => stringField(o, ONNX.VALUE_INFO_NAME))).toEqual([
      'output',
    ]);
    const infos = fieldsOf(graph, ONNX.GRAPH_VALUE_INFO);
    expect(infos.map((i) => stringField(i, ONNX.VALUE_INFO_NAME))).toEqual(['x16', 'y16']);
    expect(infos.map(elemTypeOf)).toEqual([ONNX.FLOAT, ONNX.FLOAT]);
    expect(stringField(graph, 2)).toBe('tiny');
  });

  it('refuses a graph without the fused output', () => {
    const noOutput = Buffer.concat([
      lengthDelimited(ONNX.MODEL_GRAPH, lengthDelimited(ONNX.GRAPH_NODE, node('Relu', ['a'], ['b']))),
    ]);
    expect(() => deriveIsnetFp32(noOutput)).toThrow(/no node producing "output"/);
  });
});

const packaged = existsSync(
  path.resolve(import.meta.dirname, '..', '..', '..', 'node_modules', '@imgly', 'background-removal-data'),
);

describe.runIf(packaged)('ensureIsnetFp32Model', () => {
  it('derives the manifest file byte for byte from the packaged weights, once, leaving nothing else', async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'isnet-fp32-'));
    try {
      const file = await ensureIsnetFp32Model([cacheDir], { cacheDir });
      expect(file).toBe(path.join(cacheDir, MODELS['isnet-fp32'].file));
      expect(
        createHash('sha256')
          .update(await readFile(file))
          .digest('hex'),
      ).toBe(MODELS['isnet-fp32'].sha256);
      expect((await readdir(cacheDir)).sort()).toEqual([MODELS.isnet.file, MODELS['isnet-fp32'].file].sort());
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  }, 60_000);
});
