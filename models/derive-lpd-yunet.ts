/**
 * The dynamic-input LPD-YuNet file, derived from the official fixed-input one (opencv_zoo) by rewriting its
 * ONNX protobuf: the input's height and width become the symbolic dims `height` and `width`, the outputs'
 * dims become `n` (their row count follows the input size), and the graph's `value_info` (shapes inferred
 * for 240x320, wrong at any other size) is dropped. Every other byte (nodes, weights, opset) is copied as is,
 * so the result is byte-identical to the file whose sha256 the manifest records.
 */

import { lengthDelimited, ONNX, rewrite } from './onnx-proto.ts';

const {
  MODEL_GRAPH,
  GRAPH_INPUT,
  GRAPH_OUTPUT,
  GRAPH_VALUE_INFO,
  VALUE_INFO_TYPE,
  TYPE_TENSOR,
  SHAPE_DIM,
  DIM_PARAM,
} = ONNX;
const TENSOR_SHAPE = ONNX.TENSOR_TYPE_SHAPE;

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
