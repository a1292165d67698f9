// Attention on ONNX Runtime: the whole forward pass of every head — projections, QKᵀ, scale, mask,
// softmax, AV, concatenation, W_O — in ONE graph per shape class, so no n×n intermediate comes
// back to JavaScript unless the panel shows it (materialised runs fetch the four n×n steps of
// every head, output-only runs fetch the output alone). Covers what the WebAssembly fast path
// covers (fast/index.ts `referenceOnly`); the caller hands it nothing else.
import type * as Ort from 'onnxruntime-node';
import type { AttentionSpec, DType, HeadResult, Matrix } from '../../types';
import type { AttentionShape } from '../cost';
import { fullyMaskedWarning } from '../attention';
import { inDtype } from '../kernels';
import { combinedMask } from '../masks';
import { scoreScale } from '../scores';
import { positioned } from '../fast/plan';
import { Graph, type Dim } from './graph';
import { sessionFor } from './runtime';

/** What one graph is built for: everything but the token counts and the numbers. */
export interface AttentionClass {
  dtype: DType;
  heads: number;
  kvHeads: number;
  /** Whether Q, K, V are projected through a W (else their source is fed as it is). */
  project: { q: boolean; k: boolean; v: boolean };
  outputProjection: boolean;
  masked: boolean;
  /** The scale is not 1: a scaled step of its own. */
  scaled: boolean;
  /** Every step of every head fetched (the panel's run), or the output alone. */
  materialize: boolean;
}

/** One run's feeds beside its class. */
export interface NativeRun {
  shapeClass: AttentionClass;
  feeds: Record<string, { data: Float32Array | Float64Array; dims: number[] }>;
  input?: Matrix;
  mask: Matrix | null;
  /** Rows every key of which is masked: zero weights and output, and a warning each. */
  deadRows: number[];
  shape: AttentionShape;
}

export function classKey(c: AttentionClass): string {
  return `attention:${JSON.stringify(c)}`;
}

/** The graph of a class; inputs xq [nq, ·], xk and xv [nk, ·], their W's, mask [nq, nk], dead [nq, 1], scale [], wo. */
export function attentionGraph(c: AttentionClass): Graph {
  const g = new Graph();
  const { dtype, heads: h, kvHeads } = c;
  const ints = (values: number[]): string => g.constant('int64', values);
  // Each role's source is fed apart (X three times, when it is the source of all three: it is
  // n × d_model, copied in microseconds), so one class serves given Q/K/V as well as projections.
  const projected = (role: 'q' | 'k' | 'v'): string => {
    const source = g.input(`x${role}`, dtype, [role === 'q' ? 'nq' : 'nk', `${role}_rows`]);
    return c.project[role] ? g.op('MatMul', [source, g.input(`w${role}`, dtype, [`${role}_rows`, `${role}_cols`])]) : source;
  };
  // [n, count·d] → [count, n, d]: head i is columns [i·d, (i+1)·d), as the reference splits.
  const split = (x: string, count: number): string => g.op('Transpose', [g.op('Reshape', [x, ints([0, count, -1])])], { perm: [1, 0, 2] });
  const Q = split(projected('q'), h);
  const K = split(projected('k'), kvHeads);
  const V = split(projected('v'), kvHeads);
  // Grouped-query attention: KV head j serves query heads [j·h/g, (j+1)·h/g), so each is repeated
  // h/g times in place ([g, 1, n, d] broadcast to [g, h/g, n, d], then [h, n, d]).
  const repeated = (x: string): string => {
    if (kvHeads === h) return x;
    const wide = g.op('Expand', [g.op('Unsqueeze', [x, ints([1])]), ints([1, h / kvHeads, 1, 1])]);
    return g.op('Reshape', [wide, g.op('Concat', [ints([h]), g.op('Shape', [x], { start: 1 })], { axis: 0 })]);
  };
  const scores = g.op('MatMul', [Q, g.op('Transpose', [repeated(K)], { perm: [0, 2, 1] })]);
  const scaled = c.scaled ? g.op('Mul', [scores, g.input('scale', dtype, [])]) : scores;
  const masked = c.masked ? g.op('Add', [scaled, g.input('mask', dtype, ['nq', 'nk'])]) : scaled;
  const softmax = g.op('Softmax', [masked], { axis: -1 });
  // A fully masked row's softmax is 0/0: PyTorch ≥ 2.5 gives it zero weights, so does this.
  const weights = c.masked ? g.op('Where', [g.input('dead', 'bool', ['nq', 1]), g.constant(dtype, [0], []), softmax]) : softmax;
  const headOutputs = g.op('MatMul', [weights, repeated(V)]);
  const concat = h === 1 ? g.op('Squeeze', [headOutputs, ints([0])]) : g.op('Reshape', [g.op('Transpose', [headOutputs], { perm: [1, 0, 2] }), ints([0, -1])]);
  const output = c.outputProjection ? g.op('MatMul', [concat, g.input('wo', dtype, ['concat_cols', 'out_cols'])]) : concat;

  const out = (name: string, value: string, dims: Dim[]): void => g.output(name, value, dtype, dims);
  out('output', output, ['nq', c.outputProjection ? 'out_cols' : 'concat_cols']);
  if (c.outputProjection) out('concat', concat, ['nq', 'concat_cols']);
  if (!c.materialize) return g;
  out('Q', Q, [h, 'nq', 'dk']);
  out('K', K, [kvHeads, 'nk', 'dk']);
  out('V', V, [kvHeads, 'nk', 'dv']);
  out('scores', scores, [h, 'nq', 'nk']);
  if (c.scaled) out('scaled', scaled, [h, 'nq', 'nk']);
  if (c.masked) out('masked', masked, [h, 'nq', 'nk']);
  out('weights', weights, [h, 'nq', 'nk']);
  out('headOutputs', headOutputs, [h, 'nq', 'dv']);
  out('rowSums', g.op('ReduceSum', [weights, ints([-1])], { keepdims: 0 }), [h, 'nq']);
  return g;
}

/** The matrices of one role: its source (fed as it is) and its W, if projected; undefined on a misfit. */
function roleOperands(count: number, precomputed: Matrix | undefined, W: Matrix[] | undefined, source: Matrix | undefined): { source: Matrix; W?: Matrix } | undefined {
  if (precomputed) return precomputed.cols % count === 0 ? { source: precomputed } : undefined;
  if (!source) return undefined;
  if (!W || W.length === 0) return source.cols % count === 0 ? { source } : undefined;
  if (W.some((w) => w.rows !== source.cols || w.cols !== W[0].cols)) return undefined;
  if (W.length === 1) return W[0].cols % count === 0 ? { source, W: W[0] } : undefined;
  if (W.length !== count) return undefined;
  // Per-head W's side by side: the whole W whose column blocks they are.
  const cols = W[0].cols * count;
  const data = new Float64Array(source.cols * cols);
  for (let r = 0; r < source.cols; r++) W.forEach((w, i) => data.set(w.data.subarray(r * w.cols, (r + 1) * w.cols), r * cols + i * w.cols));
  return { source, W: { rows: source.cols, cols, data } };
}

const typed = (m: Matrix, dtype: DType): Float32Array | Float64Array => inDtype(m, dtype).data;

/**
 * The feeds and class of a spec, or undefined when its shapes do not fit (the reference then says
 * why) or `admits` turns its shape down — asked before anything n×n (the mask) is built.
 */
export function prepareNative(spec: AttentionSpec, materialize: boolean, admits: (shape: AttentionShape) => boolean = () => true): NativeRun | undefined {
  const { options } = spec;
  const { dtype } = options;
  const h = options.heads;
  const kvHeads = options.kvHeads ?? h;
  if (!Number.isInteger(h) || h < 1 || !Number.isInteger(kvHeads) || kvHeads < 1 || h % kvHeads !== 0) return undefined;
  const input = spec.X && positioned(spec, spec.X);
  if (spec.X && !input) return undefined;
  const kvSource = spec.context ?? input;
  const q = roleOperands(h, spec.Q, spec.WQ, input);
  const k = roleOperands(kvHeads, spec.K, spec.WK, kvSource);
  const v = roleOperands(kvHeads, spec.V, spec.WV, kvSource);
  if (!q || !k || !v || k.source.rows !== v.source.rows) return undefined;
  const queries = q.source.rows;
  const keys = k.source.rows;
  const qCols = q.W?.cols ?? q.source.cols;
  const kCols = k.W?.cols ?? k.source.cols;
  const vCols = v.W?.cols ?? v.source.cols;
  const dK = qCols / h;
  const dV = vCols / kvHeads;
  if (kCols / kvHeads !== dK || queries === 0 || keys === 0) return undefined;
  const { mask, padding } = spec;
  if (mask && (mask.value.rows !== queries || mask.value.cols !== keys)) return undefined;
  if (padding && (padding.rows !== 1 || padding.cols !== keys)) return undefined;
  if (spec.WO && spec.WO.rows !== dV * h) return undefined;

  const shape: AttentionShape = {
    queries, keys, dModel: input?.cols ?? 0, dK, dV, heads: h, kvHeads: options.kvHeads, dtype,
    projections: Boolean(!spec.Q && spec.WQ?.length), outputProjection: Boolean(spec.WO),
  };
  if (!admits(shape)) return undefined;
  const scale = scoreScale(spec, dK);
  const additive = combinedMask(spec, queries, keys, dtype);
  const shapeClass: AttentionClass = {
    dtype, heads: h, kvHeads,
    project: { q: Boolean(q.W), k: Boolean(k.W), v: Boolean(v.W) },
    outputProjection: Boolean(spec.WO), masked: additive !== null, scaled: scale !== 1, materialize,
  };
  const feeds: NativeRun['feeds'] = {};
  const feed = (name: string, m: Matrix): void => {
    feeds[name] = { data: typed(m, dtype), dims: [m.rows, m.cols] };
  };
  feed('xq', q.source);
  feed('xk', k.source);
  feed('xv', v.source);
  if (q.W) feed('wq', q.W);
  if (k.W) feed('wk', k.W);
  if (v.W) feed('wv', v.W);
  if (spec.WO) feed('wo', spec.WO);
  if (shapeClass.scaled) feeds.scale = { data: dtype === 'float32' ? Float32Array.of(scale) : Float64Array.of(scale), dims: [] };
  const deadRows: number[] = [];
  if (additive) {
    feeds.mask = { data: additive.data, dims: [queries, keys] };
    for (let i = 0; i < queries; i++) if (additive.data.subarray(i * keys, (i + 1) * keys).every((x) => x === -Infinity)) deadRows.push(i);
  }
  return { shapeClass, feeds, input: input && inDtype(input, dtype), mask: additive, deadRows, shape };
}

export interface NativeForward {
  input?: Matrix;
  heads: HeadResult[];
  concat: Matrix;
  output: Matrix;
  /** Per head, its rows' weight sums (materialised runs). */
  rowSums: Matrix[];
  warnings: string[];
  shape: AttentionShape;
}

/** The forward pass of a prepared spec on ONNX Runtime. */
export async function forwardNative(ort: typeof Ort, spec: AttentionSpec, prepared: NativeRun): Promise<NativeForward> {
  const { shapeClass, shape } = prepared;
  const { materialize } = shapeClass;
  const session = await sessionFor(ort, classKey(shapeClass), () => attentionGraph(shapeClass));
  const feeds: Record<string, Ort.Tensor> = {};
  for (const [name, { data, dims }] of Object.entries(prepared.feeds)) feeds[name] = new ort.Tensor(data, dims);
  if (shapeClass.masked) {
    const dead = new Uint8Array(shape.queries);
    for (const row of prepared.deadRows) dead[row] = 1;
    feeds.dead = new ort.Tensor('bool', dead, [shape.queries, 1]);
  }
  const fetched = await session.run(feeds);
  const { queries, keys, dK, dV } = shape;
  const h = shapeClass.heads;
  /** Matrix `index` of a stacked [count, rows, cols] output: a view, not a copy. */
  const slice = (name: string, index: number, rows: number, cols: number): Matrix => {
    const data = fetched[name].data as Float32Array | Float64Array;
    return { rows, cols, data: data.subarray(index * rows * cols, (index + 1) * rows * cols) };
  };
  const output = slice('output', 0, queries, shapeClass.outputProjection ? (spec.WO as Matrix).cols : dV * h);
  const concat = shapeClass.outputProjection ? slice('concat', 0, queries, dV * h) : output;
  const warnings = Array.from({ length: h }, (_, i) => prepared.deadRows.map((row) => fullyMaskedWarning(spec, row, i))).flat();
  if (!materialize) return { input: prepared.input, heads: [], concat, output, rowSums: [], warnings, shape };
  const heads = Array.from({ length: h }, (_, i): HeadResult => {
    const kvHead = Math.floor(i / (h / shapeClass.kvHeads));
    const scores = slice('scores', i, queries, keys);
    const scaled = shapeClass.scaled ? slice('scaled', i, queries, keys) : scores;
    return {
      Q: slice('Q', i, queries, dK),
      K: slice('K', kvHead, keys, dK),
      V: slice('V', kvHead, keys, dV),
      scores,
      scaled,
      mask: prepared.mask,
      masked: shapeClass.masked ? slice('masked', i, queries, keys) : scaled,
      weights: slice('weights', i, queries, keys),
      output: slice('headOutputs', i, queries, dV),
      kvHead,
    };
  });
  const rowSums = heads.map((_, i) => slice('rowSums', i, queries, 1));
  return { input: prepared.input, heads, concat, output, rowSums, warnings, shape };
}
