import type { Matrix, MatrixDef, Problem, Role } from '../../types';
import { defaultOptions } from '../directive';
import { classifyName } from '../names';
import { shapeLabel, type Tensor } from './tensor';

// Model tensors → attention roles. The product's convention is row vectors: Q = X·W_Q with W_Q of
// shape d_model×d_k. Checkpoints store projections in three ways, each handled here and stated
// in every problem's notes:
//  - `nn.Linear` modules (`q_proj`, `query`, `out_proj`, …) store `weight` as out×in = W_Qᵀ: the
//    reader transposes it;
//  - `nn.MultiheadAttention` packs W_Q, W_K, W_V into `in_proj_weight` (3E×E, rows [0,E) for Q,
//    [E,2E) for K, [2E,3E) for V, each out×in) and their biases into `in_proj_bias`: split the same
//    way, then transposed;
//  - GPT-2's `Conv1D` (`attn.c_attn`, `attn.c_proj`) stores in×out (no transpose), Q|K|V packed
//    side by side in c_attn's columns;
//  - plain names (`W_Q`, `WQ`, `W_K1`…) are taken as written, d_model×d_k; a 3-d `W_Q` is one
//    d_model×d_head matrix per head (TransformerLens: heads×d_model×d_head; W_O heads×d_head×d_model).
// Biases of Q, K and V are applied exactly by appending a column of ones to X and each bias as a
// last row of its projection: [X 1]·[W; b] = X·W + b. The output projection's bias cannot be
// (the engine computes Concat·W_O), and the notes say so.

type Projection = 'WQ' | 'WK' | 'WV' | 'WO';

interface Part {
  key: string;
  /** Rows/columns to take along the packed axis: [start, end) of `parts` equal blocks. */
  slice?: { index: number; parts: number; axis: 0 | 1 };
  transposed: boolean;
}

export interface ProjectionSource {
  weight: Part;
  bias?: Part;
}

export interface AttentionLayer {
  /** The module path the projections share, e.g. `layers.0.self_attn` ('' at top level). */
  prefix: string;
  projections: Partial<Record<Projection, ProjectionSource>>;
  /** TransformerLens-style per-head weights: the head count is read from the tensor. */
  heads?: number;
}

const LINEAR: Record<string, Projection> = {
  qproj: 'WQ',
  kproj: 'WK',
  vproj: 'WV',
  oproj: 'WO',
  outproj: 'WO',
  query: 'WQ',
  key: 'WK',
  value: 'WV',
  qlin: 'WQ',
  klin: 'WK',
  vlin: 'WV',
  outlin: 'WO',
  toq: 'WQ',
  tok: 'WK',
  tov: 'WV',
  wq: 'WQ',
  wk: 'WK',
  wv: 'WV',
  wo: 'WO',
};

const PACKED: Projection[] = ['WQ', 'WK', 'WV'];

const normalize = (part: string): string => part.replace(/_/g, '').toLowerCase();

/** Every attention layer found in the tensors' names, in file order. */
export function attentionLayers(tensors: readonly Tensor[]): AttentionLayer[] {
  const layers = new Map<string, AttentionLayer>();
  const layerOf = (prefix: string): AttentionLayer => {
    let layer = layers.get(prefix);
    if (!layer) layers.set(prefix, (layer = { prefix, projections: {} }));
    return layer;
  };
  const add = (prefix: string, role: Projection, kind: 'weight' | 'bias', part: Part): void => {
    const projections = layerOf(prefix).projections;
    if (kind === 'weight') projections[role] = { ...projections[role], weight: part };
    else if (projections[role]) projections[role].bias = part;
    else projections[role] = { bias: part } as ProjectionSource;
  };
  for (const tensor of tensors) {
    const parts = tensor.key.split('.');
    const last = parts[parts.length - 1];
    const module = parts.length >= 2 ? normalize(parts[parts.length - 2]) : '';
    const prefixOf = (drop: number) => parts.slice(0, parts.length - drop).join('.');
    if (last === 'in_proj_weight' || last === 'in_proj_bias') {
      const kind = last === 'in_proj_weight' ? 'weight' : 'bias';
      PACKED.forEach((role, index) => add(prefixOf(1), role, kind, { key: tensor.key, slice: { index, parts: 3, axis: 0 }, transposed: true }));
    } else if ((last === 'weight' || last === 'bias') && module === 'cattn') {
      PACKED.forEach((role, index) => add(prefixOf(2), role, last, { key: tensor.key, slice: { index, parts: 3, axis: 1 }, transposed: false }));
    } else if ((last === 'weight' || last === 'bias') && module === 'cproj' && /attn$/i.test(parts[parts.length - 3] ?? '')) {
      add(prefixOf(2), 'WO', last, { key: tensor.key, transposed: false });
    } else if ((last === 'weight' || last === 'bias') && LINEAR[module]) {
      add(prefixOf(2), LINEAR[module], last, { key: tensor.key, transposed: true });
    } else {
      const meaning = classifyName(last);
      if (meaning.kind === 'matrix' && meaning.head === undefined && (meaning.role === 'WQ' || meaning.role === 'WK' || meaning.role === 'WV' || meaning.role === 'WO')) {
        add(prefixOf(1), meaning.role, 'weight', { key: tensor.key, transposed: false });
        if (tensor.shape.length === 3) layerOf(prefixOf(1)).heads = tensor.shape[0];
      } else if (meaning.kind === 'unknown' && /^b_?[qkvo]$/i.test(last)) {
        add(prefixOf(1), `W${last.slice(-1).toUpperCase()}` as Projection, 'bias', { key: tensor.key, transposed: false });
      }
    }
  }
  return [...layers.values()].filter((layer) => layer.projections.WQ?.weight && layer.projections.WK?.weight);
}

/** Names checkpoints and notebooks give input activations (the last part of a key). */
const INPUT_NAME = /^(x|e|inputs?|embeddings|hidden_?states|acts|activations)$/i;

/** Tensors that can serve as X: those named as inputs first, then every other matrix. */
export function inputTensors(tensors: readonly Tensor[]): Tensor[] {
  const isInput = (tensor: Tensor) => INPUT_NAME.test(tensor.key.split('.').pop() ?? '');
  const matrices = tensors.filter((tensor) => tensor.shape.length >= 2 && matrixShape(tensor.shape) !== undefined);
  return [...matrices.filter(isInput), ...matrices.filter((tensor) => !isInput(tensor))];
}

/** The tensor a checkpoint names as its input, if any. */
export function namedInput(tensors: readonly Tensor[]): Tensor | undefined {
  const [first] = inputTensors(tensors);
  return first && INPUT_NAME.test(first.key.split('.').pop() ?? '') ? first : undefined;
}

/** A tensor's shape as a matrix: 2-d, a 1-d row, or higher with every leading size 1. */
function matrixShape(shape: readonly number[]): { rows: number; cols: number } | undefined {
  if (shape.length === 1) return { rows: 1, cols: shape[0] };
  if (shape.length < 2 || shape.slice(0, -2).some((size) => size !== 1)) return undefined;
  return { rows: shape[shape.length - 2], cols: shape[shape.length - 1] };
}

/** The tensor as a float64 matrix, or why it cannot be one. */
export function tensorMatrix(tensor: Tensor): Matrix | string {
  const shape = matrixShape(tensor.shape);
  if (!shape) {
    return tensor.shape.length === 0
      ? `${tensor.key} is a scalar: attention needs a matrix (one row per token).`
      : `${tensor.key} is ${shapeLabel(tensor.shape)}: attention reads 2-d matrices; save one slice (e.g. batch 0, head 0) as its own tensor.`;
  }
  return { ...shape, data: Float64Array.from(tensor.data) };
}

export interface TensorProblemRequest {
  /** The tensor file's name, for messages and locations. */
  file: string;
  tensors: readonly Tensor[];
  layer: AttentionLayer;
  /** The input: a matrix with where it came from. */
  X: { matrix: Matrix; name: string; source: MatrixDef['source'] };
  heads?: number;
}

export interface TensorProblem {
  problem: Problem;
  /** How names became roles and what was (not) applied: shown in the panel and by the CLI. */
  notes: string[];
}

const ZERO = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** One problem: X against the chosen layer's projections, as the text reader would produce it. */
export function tensorProblem(request: TensorProblemRequest): TensorProblem | string {
  const { layer, file } = request;
  const byKey = new Map(request.tensors.map((tensor) => [tensor.key, tensor]));
  const notes: string[] = [];
  const matrices: MatrixDef[] = [];
  const heads = layer.heads ?? request.heads ?? 1;
  const read = (part: Part, role: Projection | 'bias'): Matrix | string => {
    const tensor = byKey.get(part.key);
    if (!tensor) return `${part.key} is not in ${file}.`;
    if (role !== 'bias' && tensor.shape.length === 3) return stackHeads(tensor, role);
    const whole = tensorMatrix(tensor);
    if (typeof whole === 'string') return whole;
    const sliced = part.slice ? sliceMatrix(whole, part.slice) : whole;
    if (typeof sliced === 'string') return `${part.key}: ${sliced}`;
    return part.transposed && role !== 'bias' ? transpose(sliced) : sliced;
  };
  const biases: Partial<Record<Projection, Matrix>> = {};
  for (const role of ['WQ', 'WK', 'WV', 'WO'] as const) {
    const source = layer.projections[role];
    if (!source?.weight) continue;
    const weight = read(source.weight, role);
    if (typeof weight === 'string') return weight;
    matrices.push(def(`${source.weight.key}${describePart(source.weight)}`, role, weight, file, source.weight.key));
    if (source.bias) {
      const bias = read(source.bias, 'bias');
      if (typeof bias === 'string') return bias;
      // Row-major flattening also lines up TransformerLens' heads×d_head biases with the heads' columns.
      biases[role] = { rows: 1, cols: bias.rows * bias.cols, data: bias.data };
    }
  }
  let X = request.X.matrix;
  const biased = PACKED.filter((role) => biases[role]);
  if (biased.length > 0) {
    X = appendOnes(X);
    for (const matrix of matrices) {
      if (matrix.role === 'WQ' || matrix.role === 'WK' || matrix.role === 'WV') {
        const bias = biases[matrix.role];
        const value = appendRow(matrix.value, bias ?? { rows: 1, cols: matrix.value.cols, data: new Float64Array(matrix.value.cols) });
        if (typeof value === 'string') return `${matrix.name}: ${value}`;
        matrix.value = value;
      }
    }
    notes.push(`Biases of ${biased.map((role) => `W_${role[1]}`).join(', ')} are applied as [X 1]·[W; b] = X·W + b: X gains a column of ones, each projection its bias as a last row.`);
  }
  if (biases.WO) notes.push(`The output projection's bias is not applied: the output is Concat(heads)·W_O (PyTorch adds ${layer.projections.WO?.bias?.key} after that).`);
  const transposed = [...new Set(Object.values(layer.projections).filter((source) => source?.weight?.transposed).map((source) => source!.weight.key))];
  if (transposed.length > 0) notes.push(`nn.Linear stores W transposed (out×in); ${transposed.join(', ')} ${transposed.length === 1 ? 'was' : 'were'} transposed to the row convention Q = X·W_Q.`);
  if (layer.projections.WQ?.weight.slice?.axis === 0) notes.push('in_proj_weight is split as nn.MultiheadAttention does: rows [0, E) → W_Q, [E, 2E) → W_K, [2E, 3E) → W_V.');
  matrices.unshift(def(request.X.name, 'X', X, file, request.X.source?.key ?? request.X.name, request.X.source));
  const options = { ...defaultOptions(), heads };
  const label = layer.prefix === '' ? file : `${file} · ${layer.prefix}`;
  return { problem: { index: 0, name: label, range: ZERO, options: { ...options, name: label }, matrices }, notes };
}

function def(name: string, role: Role, value: Matrix, file: string, key: string, source?: MatrixDef['source']): MatrixDef {
  return { name, role, value, boolean: false, nameRange: ZERO, range: ZERO, cellOffsets: new Uint32Array(0), source: source ?? { kind: 'tensor', file, key } };
}

function describePart(part: Part): string {
  const slice = part.slice ? `[${['Q', 'K', 'V'][part.slice.index]} block]` : '';
  return `${slice}${part.transposed ? 'ᵀ' : ''}`;
}

function sliceMatrix(m: Matrix, slice: NonNullable<Part['slice']>): Matrix | string {
  const along = slice.axis === 0 ? m.rows : m.cols;
  // A packed bias is a 1×3E row: split along its columns.
  const axis = m.rows === 1 ? 1 : slice.axis;
  const length = axis === 0 ? m.rows : m.cols;
  if (length % slice.parts !== 0) return `${shapeLabel([m.rows, m.cols])} cannot be split into ${slice.parts} equal blocks (${along}).`;
  const size = length / slice.parts;
  const start = slice.index * size;
  if (axis === 0) return { rows: size, cols: m.cols, data: m.data.slice(start * m.cols, (start + size) * m.cols) };
  const data = new Float64Array(m.rows * size);
  for (let i = 0; i < m.rows; i++) data.set(m.data.subarray(i * m.cols + start, i * m.cols + start + size), i * size);
  return { rows: m.rows, cols: size, data };
}

export function transpose(m: Matrix): Matrix {
  const data = new Float64Array(m.data.length);
  for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) data[j * m.rows + i] = m.data[i * m.cols + j];
  return { rows: m.cols, cols: m.rows, data };
}

/** heads×a×b per-head weights → one matrix, heads side by side (W_Q: a×(heads·b)), or stacked (W_O). */
function stackHeads(tensor: Tensor, role: Projection): Matrix {
  const [heads, a, b] = tensor.shape;
  if (role === 'WO') return { rows: heads * a, cols: b, data: Float64Array.from(tensor.data) };
  const data = new Float64Array(a * heads * b);
  for (let h = 0; h < heads; h++) for (let i = 0; i < a; i++) for (let j = 0; j < b; j++) data[i * heads * b + h * b + j] = tensor.data[(h * a + i) * b + j];
  return { rows: a, cols: heads * b, data };
}

function appendOnes(m: Matrix): Matrix {
  const data = new Float64Array(m.rows * (m.cols + 1));
  for (let i = 0; i < m.rows; i++) {
    data.set(m.data.subarray(i * m.cols, (i + 1) * m.cols), i * (m.cols + 1));
    data[i * (m.cols + 1) + m.cols] = 1;
  }
  return { rows: m.rows, cols: m.cols + 1, data };
}

function appendRow(m: Matrix, row: Matrix): Matrix | string {
  if (row.cols !== m.cols || row.rows !== 1) return `its bias has ${row.rows * row.cols} entries but the projection has ${m.cols} columns.`;
  const data = new Float64Array((m.rows + 1) * m.cols);
  data.set(m.data);
  data.set(row.data, m.rows * m.cols);
  return { rows: m.rows + 1, cols: m.cols, data };
}

/** The layer `choice` names: its prefix, or its index (from 0) among the layers found. */
export function chooseLayer(layers: readonly AttentionLayer[], choice: string | undefined): AttentionLayer | string {
  if (layers.length === 0) return 'No attention layer found: no tensors named like q_proj/k_proj/v_proj, query/key/value, in_proj_weight, c_attn or W_Q/W_K/W_V.';
  if (choice === undefined) return layers[0];
  const byPrefix = layers.find((layer) => layer.prefix === choice);
  if (byPrefix) return byPrefix;
  const index = /^\d+$/.test(choice) ? Number(choice) : -1;
  return layers[index] ?? `No layer ${JSON.stringify(choice)}: the layers are ${layers.map((layer, i) => `${i} (${layer.prefix || 'top level'})`).join(', ')}.`;
}
