// ONNX graphs written as TypeScript calls: each `op` adds one node and returns the name of its
// output, so a graph reads like the math it computes. The protobuf encoding is onnx-proto's
// (ONNX's own onnx.proto compiled by protobufjs). Shapes are symbolic where they vary between runs
// of one shape class (token counts), so one session serves every size of its class.
import { onnx } from 'onnx-proto';
import type { DType } from '../../types';

/** ONNX's opset the graphs use: Softmax over the last axis only (13), Reduce* axes as inputs (18). */
const OPSET = 18;
const IR_VERSION = 8;
const RUNTIME_DOMAIN = 'com.microsoft';

export type ElementType = DType | 'int64' | 'bool' | 'bfloat16' | 'float16';
const ELEMENT: Record<ElementType, onnx.TensorProto.DataType> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  bfloat16: onnx.TensorProto.DataType.BFLOAT16,
  float16: onnx.TensorProto.DataType.FLOAT16,
  float64: onnx.TensorProto.DataType.DOUBLE,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
};

/** A dimension: a fixed size, or a name shared by every dimension of that size in the graph. */
export type Dim = number | string;
type Attribute = number | number[];

function typeOf(element: ElementType, dims: Dim[]): onnx.ITypeProto {
  return {
    tensorType: {
      elemType: ELEMENT[element],
      shape: { dim: dims.map((dim) => (typeof dim === 'number' ? { dimValue: dim } : { dimParam: dim })) },
    },
  };
}

function attributeOf(name: string, value: Attribute): onnx.IAttributeProto {
  return Array.isArray(value)
    ? { name, type: onnx.AttributeProto.AttributeType.INTS, ints: value }
    : { name, type: onnx.AttributeProto.AttributeType.INT, i: value };
}

export class Graph {
  private readonly nodes: onnx.INodeProto[] = [];
  private readonly inputs: onnx.IValueInfoProto[] = [];
  private readonly outputs: onnx.IValueInfoProto[] = [];
  private readonly initializers: onnx.ITensorProto[] = [];
  private names = 0;

  /** A value the caller feeds at every run. */
  input(name: string, element: ElementType, dims: Dim[]): string {
    this.inputs.push({ name, type: typeOf(element, dims) });
    return name;
  }

  /** One node; the name of its (first) output. */
  op(type: string, inputs: string[], attributes: Record<string, Attribute> = {}): string {
    return this.node(type, inputs, attributes, '');
  }

  /** One node of ONNX Runtime's own operators (the com.microsoft domain: fused kernels ONNX has no op for). */
  runtimeOp(type: string, inputs: string[]): string {
    return this.node(type, inputs, {}, RUNTIME_DOMAIN);
  }

  /** One node of `count` outputs (Split); their names. */
  opOutputs(type: string, inputs: string[], attributes: Record<string, Attribute>, count: number): string[] {
    return this.node(type, inputs, attributes, '', count);
  }

  private node(type: string, inputs: string[], attributes: Record<string, Attribute>, domain: string): string;
  private node(type: string, inputs: string[], attributes: Record<string, Attribute>, domain: string, count: number): string[];
  private node(type: string, inputs: string[], attributes: Record<string, Attribute>, domain: string, count?: number): string | string[] {
    const first = this.names;
    this.names += count ?? 1;
    const outputs = Array.from({ length: count ?? 1 }, (_, i) => `${type.toLowerCase()}_${first + i}`);
    const attribute = Object.entries(attributes).map(([name, value]) => attributeOf(name, value));
    this.nodes.push({ opType: type, domain, input: inputs, output: outputs, attribute });
    return count === undefined ? outputs[0] : outputs;
  }

  /** A constant tensor of int64s (shapes and axes) or of the graph's floats. */
  constant(element: 'int64' | DType, values: number[], dims: number[] = [values.length]): string {
    const name = `const_${this.names++}`;
    const tensor: onnx.ITensorProto = { name, dims, dataType: ELEMENT[element] };
    if (element === 'int64') tensor.int64Data = values;
    else if (element === 'float64') tensor.doubleData = values;
    else tensor.floatData = values;
    this.initializers.push(tensor);
    return name;
  }

  /**
   * A constant tensor given as its little-endian bytes (a model's weight): ONNX Runtime folds the
   * ops on it (Cast, Transpose) once at the session's creation and pre-packs it for its GEMM.
   */
  initializer(name: string, element: ElementType, dims: number[], rawData: Uint8Array): string {
    this.initializers.push({ name, dims, dataType: ELEMENT[element], rawData });
    return name;
  }

  /** Makes `value` a result of the graph, fetched under `name`. */
  output(name: string, value: string, element: ElementType, dims: Dim[]): void {
    this.nodes.push({ opType: 'Identity', input: [value], output: [name] });
    this.outputs.push({ name, type: typeOf(element, dims) });
  }

  get outputNames(): string[] {
    return this.outputs.map((output) => output.name as string);
  }

  encode(): Uint8Array {
    const graph: onnx.IGraphProto = { name: 'attention-lens', node: this.nodes, input: this.inputs, output: this.outputs, initializer: this.initializers };
    const opsetImport = [{ domain: '', version: OPSET }];
    if (this.nodes.some((node) => node.domain === RUNTIME_DOMAIN)) opsetImport.push({ domain: RUNTIME_DOMAIN, version: 1 });
    const model: onnx.IModelProto = { irVersion: IR_VERSION, opsetImport, producerName: 'attention-lens', graph };
    return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  }
}
