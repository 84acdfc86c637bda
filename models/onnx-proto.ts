/**
 * Just enough protobuf to rewrite ONNX files in place (models/derive-*.ts): fields are read lazily as
 * slices of the original buffer, and every field a rewrite does not touch is copied byte for byte, so a
 * derived file is deterministic and its sha256 can be recorded in the manifest.
 */

export interface Field {
  field: number;
  wire: number;
  /** Payload of a length-delimited field (empty otherwise). */
  payload: Buffer;
  /** Value of a varint field (0 otherwise). */
  value: number;
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

export function parseFields(buffer: Buffer): Field[] {
  const fields: Field[] = [];
  let position = 0;
  while (position < buffer.length) {
    const start = position;
    const [key, afterKey] = readVarint(buffer, position);
    const wire = key & 7;
    position = afterKey;
    let payload: Buffer = Buffer.alloc(0);
    let value = 0;
    if (wire === 0) [value, position] = readVarint(buffer, position);
    else if (wire === 1) position += 8;
    else if (wire === 5) position += 4;
    else if (wire === 2) {
      const [length, afterLength] = readVarint(buffer, position);
      payload = buffer.subarray(afterLength, afterLength + length);
      position = afterLength + length;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (position > buffer.length) throw new Error('truncated protobuf message');
    fields.push({ field: key >>> 3, wire, payload, value, raw: buffer.subarray(start, position) });
  }
  return fields;
}

export const lengthDelimited = (field: number, payload: Buffer): Buffer =>
  Buffer.concat([encodeVarint((field << 3) | 2), encodeVarint(payload.length), payload]);

/** A length-delimited field whose payload is `parts` in order, as parts (nothing copied). */
export const lengthDelimitedParts = (field: number, parts: readonly Buffer[]): Buffer[] => [
  encodeVarint((field << 3) | 2),
  encodeVarint(parts.reduce((sum, part) => sum + part.length, 0)),
  ...parts,
];

/** A non-negative varint field. */
export const varintField = (field: number, value: number): Buffer =>
  Buffer.concat([encodeVarint(field << 3), encodeVarint(value)]);

/** Rewrites the length-delimited fields `field` of a message with `change` (null drops one); the rest is copied. */
export function rewrite(
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

/** The first length-delimited field `field` of a message, as text; undefined when absent. */
export const stringField = (message: Buffer, field: number): string | undefined =>
  parseFields(message)
    .find((f) => f.field === field && f.wire === 2)
    ?.payload.toString('utf8');

/** ONNX field numbers (onnx.proto3). */
export const ONNX = {
  MODEL_GRAPH: 7,
  GRAPH_NODE: 1,
  GRAPH_INITIALIZER: 5,
  GRAPH_INPUT: 11,
  GRAPH_OUTPUT: 12,
  GRAPH_VALUE_INFO: 13,
  NODE_INPUT: 1,
  NODE_OUTPUT: 2,
  NODE_OP_TYPE: 4,
  NODE_ATTRIBUTE: 5,
  ATTRIBUTE_NAME: 1,
  ATTRIBUTE_I: 3,
  ATTRIBUTE_T: 5,
  TENSOR_DATA_TYPE: 2,
  TENSOR_NAME: 8,
  TENSOR_RAW_DATA: 9,
  VALUE_INFO_NAME: 1,
  VALUE_INFO_TYPE: 2,
  TYPE_TENSOR: 1,
  TENSOR_TYPE_ELEM_TYPE: 1,
  TENSOR_TYPE_SHAPE: 2,
  SHAPE_DIM: 1,
  DIM_PARAM: 2,
  /** TensorProto.DataType */
  FLOAT: 1,
  FLOAT16: 10,
} as const;
