/**
 * ISNet with float32 weights, derived from the fp16 file IMG.LY ships (models/isnet.ts joins it). That file
 * stores every initializer as float16 and wraps the graph in Casts; onnxruntime's x86 CPU provider has no
 * float16 Conv, so it runs the float32 kernels with conversions around them. Here, by rewriting the ONNX
 * protobuf:
 * - each float16 initializer becomes float32 raw data (exact: every float16 is a float32);
 * - each Cast to float16 becomes a Cast to float32 (a no-op onnxruntime removes when it loads the graph);
 * - each float16 value_info, input or output type becomes float32;
 * - the graph keeps only its fused output `output`: the ten deep-supervision side outputs, and the nodes
 *   and weights only they need, are dropped (onnxruntime runs every node of a graph, fetched or not).
 * Every other byte is copied as is, so the result is deterministic and its sha256 is in the manifest.
 */
import {
  type Field,
  lengthDelimitedParts,
  ONNX,
  parseFields,
  rewrite,
  stringField,
  varintField,
} from './onnx-proto.ts';

/** The output the segmenter reads; it is what IMG.LY's pipeline reads too. */
const ISNET_OUTPUT = 'output';

/** float16 bits to float32 bits; exact for every value, infinities and NaNs kept. */
function halfToFloatBits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0x1f) return (sign | 0x7f800000 | (mantissa << 13)) >>> 0;
  if (exponent !== 0) return (sign | ((exponent - 15 + 127) << 23) | (mantissa << 13)) >>> 0;
  if (mantissa === 0) return sign >>> 0;
  // Subnormal: normalise the mantissa.
  let e = -14;
  let m = mantissa;
  while (!(m & 0x400)) {
    m <<= 1;
    e--;
  }
  return (sign | ((e + 127) << 23) | ((m & 0x3ff) << 13)) >>> 0;
}

let halfTable: Uint32Array | undefined;

function halfToFloatRaw(raw: Buffer): Buffer {
  if (raw.length % 2 !== 0) throw new Error('float16 raw_data of odd length');
  if (!halfTable) {
    halfTable = new Uint32Array(0x10000);
    for (let h = 0; h < 0x10000; h++) halfTable[h] = halfToFloatBits(h);
  }
  // A 16-bit view needs an even offset (copied otherwise); raw_data is little-endian, as are our hosts.
  const aligned = raw.byteOffset % 2 === 0 ? raw : Buffer.from(raw);
  const halves = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.length / 2);
  const floats = new Uint32Array(halves.length);
  for (let i = 0; i < halves.length; i++) floats[i] = halfTable[halves[i]!]!;
  return Buffer.from(floats.buffer);
}

/** A TensorProto with float16 raw data as float32 raw data; other tensors unchanged. */
function tensorToFloat(tensor: Buffer): Buffer | Buffer[] {
  const fields = parseFields(tensor);
  const type = fields.find((f) => f.field === ONNX.TENSOR_DATA_TYPE && f.wire === 0);
  if (type?.value !== ONNX.FLOAT16) return tensor;
  const name = stringField(tensor, ONNX.TENSOR_NAME);
  if (!fields.some((f) => f.field === ONNX.TENSOR_RAW_DATA)) {
    throw new Error(`float16 tensor ${name} is not stored as raw_data`);
  }
  return fields.flatMap((f) => {
    if (f === type) return [varintField(ONNX.TENSOR_DATA_TYPE, ONNX.FLOAT)];
    if (f.field === ONNX.TENSOR_RAW_DATA) return lengthDelimitedParts(f.field, [halfToFloatRaw(f.payload)]);
    return [f.raw];
  });
}

/** A ValueInfoProto whose float16 tensor type becomes float32. */
const valueInfoToFloat = (valueInfo: Buffer): Buffer =>
  rewrite(valueInfo, ONNX.VALUE_INFO_TYPE, (type) =>
    rewrite(type, ONNX.TYPE_TENSOR, (tensor) =>
      Buffer.concat(
        parseFields(tensor).map((f) =>
          f.field === ONNX.TENSOR_TYPE_ELEM_TYPE && f.wire === 0 && f.value === ONNX.FLOAT16
            ? varintField(ONNX.TENSOR_TYPE_ELEM_TYPE, ONNX.FLOAT)
            : f.raw,
        ),
      ),
    ),
  );

/** A NodeProto whose Cast to float16 becomes a Cast to float32. */
function nodeToFloat(node: Buffer, opType: string): Buffer {
  if (opType !== 'Cast') return node;
  return rewrite(node, ONNX.NODE_ATTRIBUTE, (attribute) => {
    if (stringField(attribute, ONNX.ATTRIBUTE_NAME) !== 'to') return attribute;
    return Buffer.concat(
      parseFields(attribute).map((f: Field) =>
        f.field === ONNX.ATTRIBUTE_I && f.wire === 0 && f.value === ONNX.FLOAT16
          ? varintField(ONNX.ATTRIBUTE_I, ONNX.FLOAT)
          : f.raw,
      ),
    );
  });
}

interface NodeInfo {
  opType: string;
  inputs: string[];
  outputs: string[];
}

const nodeInfo = (node: Buffer): NodeInfo => {
  const fields = parseFields(node);
  const strings = (n: number) => fields.filter((f) => f.field === n).map((f) => f.payload.toString('utf8'));
  return {
    opType: stringField(node, ONNX.NODE_OP_TYPE) ?? '',
    inputs: strings(ONNX.NODE_INPUT),
    outputs: strings(ONNX.NODE_OUTPUT),
  };
};

/**
 * The names of the values `output` depends on. Walked through producers rather than in graph order: the
 * float16 converter appended its Casts at the end of the node list.
 */
function neededValues(nodes: NodeInfo[], output: string): Set<string> {
  const producer = new Map<string, NodeInfo>();
  for (const node of nodes) for (const o of node.outputs) producer.set(o, node);
  const needed = new Set<string>();
  const pending = [output];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (needed.has(name)) continue;
    needed.add(name);
    const node = producer.get(name);
    if (!node) continue;
    for (const o of node.outputs) needed.add(o);
    for (const input of node.inputs) if (input && !needed.has(input)) pending.push(input);
  }
  return needed;
}

/**
 * The float32 model as the parts of its encoding, in order (write or hash them one after the other): one
 * 176 MB Buffer.concat costs about as much as the whole conversion on a small VM.
 */
export function deriveIsnetFp32(fp16: Buffer): Buffer[] {
  const model = parseFields(fp16);
  const graphs = model.filter((f) => f.field === ONNX.MODEL_GRAPH && f.wire === 2);
  if (graphs.length !== 1) throw new Error(`expected one graph in the model, found ${graphs.length}`);
  const graph = graphs[0]!.payload;
  const nodes = parseFields(graph)
    .filter((f) => f.field === ONNX.GRAPH_NODE && f.wire === 2)
    .map((f) => nodeInfo(f.payload));
  if (!nodes.some((n) => n.outputs.includes(ISNET_OUTPUT))) {
    throw new Error(`the graph has no node producing "${ISNET_OUTPUT}"`);
  }
  const needed = neededValues(nodes, ISNET_OUTPUT);
  const keep = (name: string | undefined) => name !== undefined && needed.has(name);
  let nodeIndex = 0;
  const graphParts: Buffer[] = [];
  for (const f of parseFields(graph)) {
    let changed: Buffer | Buffer[] | null = f.raw;
    if (f.wire !== 2) changed = f.raw;
    else if (f.field === ONNX.GRAPH_NODE) {
      const info = nodes[nodeIndex++]!;
      changed = info.outputs.some((o) => needed.has(o)) ? nodeToFloat(f.payload, info.opType) : null;
    } else if (f.field === ONNX.GRAPH_INITIALIZER) {
      changed = keep(stringField(f.payload, ONNX.TENSOR_NAME)) ? tensorToFloat(f.payload) : null;
    } else if (f.field === ONNX.GRAPH_INPUT || f.field === ONNX.GRAPH_VALUE_INFO) {
      changed = keep(stringField(f.payload, ONNX.VALUE_INFO_NAME)) ? valueInfoToFloat(f.payload) : null;
    } else if (f.field === ONNX.GRAPH_OUTPUT) {
      changed =
        stringField(f.payload, ONNX.VALUE_INFO_NAME) === ISNET_OUTPUT ? valueInfoToFloat(f.payload) : null;
    }
    if (changed === f.raw) graphParts.push(f.raw);
    else if (changed)
      graphParts.push(...lengthDelimitedParts(f.field, Array.isArray(changed) ? changed : [changed]));
  }
  const parts: Buffer[] = [];
  for (const f of model) {
    if (f.field === ONNX.MODEL_GRAPH && f.wire === 2)
      parts.push(...lengthDelimitedParts(f.field, graphParts));
    else parts.push(f.raw);
  }
  return parts;
}
