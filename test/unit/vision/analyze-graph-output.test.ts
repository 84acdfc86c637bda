import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { exposeGraphOutput } from '#vision/feature-extractor.ts';

// A hand-written ONNX model, x -> Neg -> y -> Neg -> z, with only z as a graph output.
const text = (s: string) => new TextEncoder().encode(s);
const varint = (v: number): number[] => (v < 0x80 ? [v] : [(v % 128) | 0x80, ...varint(Math.floor(v / 128))]);
const bytes = (field: number, payload: Uint8Array) =>
  Uint8Array.from([...varint((field << 3) | 2), ...varint(payload.length), ...payload]);
const int = (field: number, v: number) => Uint8Array.from([...varint(field << 3), ...varint(v)]);
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

const floatVector = (name: string) =>
  cat(bytes(1, text(name)), bytes(2, bytes(1, cat(int(1, 1), bytes(2, bytes(1, int(1, 3)))))));
const neg = (input: string, output: string) =>
  bytes(1, cat(bytes(1, text(input)), bytes(2, text(output)), bytes(3, text(output)), bytes(4, text('Neg'))));
const graph = cat(
  neg('x', 'y'),
  neg('y', 'z'),
  bytes(2, text('g')),
  bytes(11, floatVector('x')),
  bytes(12, floatVector('z')),
);
const model = cat(int(1, 7), bytes(8, cat(bytes(1, text('')), int(2, 12))), bytes(7, graph));

describe('exposeGraphOutput', () => {
  it('makes an internal tensor a graph output that onnxruntime returns', async () => {
    const plain = await ort.InferenceSession.create(model);
    expect(plain.outputNames).toEqual(['z']);

    const session = await ort.InferenceSession.create(exposeGraphOutput(model, 'y'));
    expect(session.outputNames).toEqual(['z', 'y']);
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([1, -2, 3]), [3]) });
    expect([...(out.y!.data as Float32Array)]).toEqual([-1, 2, -3]);
    expect([...(out.z!.data as Float32Array)]).toEqual([1, -2, 3]);
  });

  it('keeps every byte before the graph and refuses what is not a model', () => {
    const exposed = exposeGraphOutput(model, 'y');
    const graphAt = model.length - graph.length - 2;
    expect([...exposed.subarray(0, graphAt)]).toEqual([...model.subarray(0, graphAt)]);
    expect(() => exposeGraphOutput(int(1, 7), 'y')).toThrow(/no graph/);
    expect(() => exposeGraphOutput(Uint8Array.from([0x0b]), 'y')).toThrow(/not an ONNX model/);
  });
});
