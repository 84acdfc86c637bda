/**
 * The dynamic-input LPD-YuNet file, derived from the official fixed-input one (opencv_zoo) by rewriting its
 * ONNX protobuf: the input's height and width become the symbolic dims `height` and `width`, the outputs'
 * dims become `n` (their row count follows the input size), and the graph's `value_info` (shapes inferred
 * for 240x320, wrong at any other size) is dropped. Every other byte (nodes, weights, opset) is copied as is,
 * so the result is byte-identical to the file whose sha256 the manifest records.
 */

interface Field {
  field: number;
  wire: number;
  /** Payload of a length-delimited field. */
  payload: Buffer;
  /** The field's whole encoding (key, length, payload), copied untouched when not rewritten. */
  raw: Buffer;
}

function readVarint(buffer: Buffer, start: number): [number, number] {
  let value = 0;
  let multiplier = 1;
  let position = start;
  for (;;) {
    const byte = buffer[position++];
    if (byte === undefined) throw new Error('truncated protobuf varint');
    value += (byte & 0x7f) * multiplier;
    if (!(byte & 0x80)) return [value, position];
    multiplier *= 128;
  }
}

function encodeVarint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function parseFields(buffer: Buffer): Field[] {
  const fields: Field[] = [];
  let position = 0;
  while (position < buffer.length) {
    const start = position;
    const [key, afterKey] = readVarint(buffer, position);
    const wire = key & 7;
    position = afterKey;
    let payload: Buffer = Buffer.alloc(0);
    if (wire === 0) position = readVarint(buffer, position)[1];
    else if (wire === 1) position += 8;
    else if (wire === 5) position += 4;
    else if (wire === 2) {
      const [length, afterLength] = readVarint(buffer, position);
      payload = buffer.subarray(afterLength, afterLength + length);
      position = afterLength + length;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (position > buffer.length) throw new Error('truncated protobuf message');
    fields.push({ field: key >>> 3, wire, payload, raw: buffer.subarray(start, position) });
  }
  return fields;
}

const lengthDelimited = (field: number, payload: Buffer): Buffer =>
  Buffer.concat([encodeVarint((field << 3) | 2), encodeVarint(payload.length), payload]);

/** Rewrites the length-delimited fields `field` of a message with `rewrite`; everything else is copied. */
function rewrite(
  message: Buffer,
  field: number,
  change: (payload: Buffer, index: number) => Buffer | null,
): Buffer {
  let index = 0;
  const parts: Buffer[] = [];
  for (const entry of parseFields(message)) {
    if (entry.field !== field || entry.wire !== 2) {
      parts.push(entry.raw);
      continue;
    }
    const changed = change(entry.payload, index++);
    if (changed) parts.push(lengthDelimited(field, changed));
  }
  return Buffer.concat(parts);
}

// ONNX field numbers (onnx.proto3).
const MODEL_GRAPH = 7;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const GRAPH_VALUE_INFO = 13;
const VALUE_INFO_TYPE = 2;
const TYPE_TENSOR = 1;
const TENSOR_SHAPE = 2;
const SHAPE_DIM = 1;
const DIM_PARAM = 2;

const symbolicDim = (name: string) => lengthDelimited(DIM_PARAM, Buffer.from(name, 'utf8'));

/** A ValueInfoProto whose tensor dims are renamed where `names[i]` is set (dim i keeps its value otherwise). */
function withSymbolicDims(valueInfo: Buffer, names: readonly (string | null)[]): Buffer {
  return rewrite(valueInfo, VALUE_INFO_TYPE, (type) =>
    rewrite(type, TYPE_TENSOR, (tensor) =>
      rewrite(tensor, TENSOR_SHAPE, (shape) =>
        rewrite(shape, SHAPE_DIM, (dim, index) => {
          const name = names[index];
          return name ? symbolicDim(name) : dim;
        }),
      ),
    ),
  );
}

export function deriveDynamicLpdYunet(fixed: Buffer): Buffer {
  return rewrite(fixed, MODEL_GRAPH, (graph) => {
    const inputsDone = rewrite(graph, GRAPH_INPUT, (input) =>
      withSymbolicDims(input, [null, null, 'height', 'width']),
    );
    const outputsDone = rewrite(inputsDone, GRAPH_OUTPUT, (output) => withSymbolicDims(output, ['n', 'n']));
    return rewrite(outputsDone, GRAPH_VALUE_INFO, () => null);
  });
}
