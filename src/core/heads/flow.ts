// Attention flow (Abnar & Zuidema, 2020): the layers as a flow network and, for each output
// position, the maximum flow it can draw from each input token.
//   nodes: (l, i) for l = 0…L (0: the input tokens, l: the output of layer l − 1), i = 0…n−1;
//   edges: (l+1, i) → (l, j) with capacity Â_l[i][j] (rollout.ts: half attention, half residual);
//   F[i][j] = maxflow((L, i) → (0, j)), each row then divided by its sum (as the paper's code does).
// One max-flow per (output, input) pair over L·n² edges: the cost grows as L·n⁴, so it is
// offered only up to FLOW_MAX_WORK (measured by bench/heads-analysis.ts to finish within 2 s).
// Dinic's algorithm. Pure functions: no `vscode` import.
import { withResidual } from './rollout';

/**
 * Largest L·n⁴ attention flow takes on: 12 layers up to 40 tokens. Measured by
 * bench/heads-analysis.ts on a shared 2-core machine, 12 layers of full (non-causal) attention:
 * 40 tokens (L·n⁴ = 3.07e7) took 0.82 s of CPU time (3.6 s of wall time under load ≈ 23), 31
 * tokens 0.29 s; causal attention is faster. The margin leaves room for slower machines.
 */
export const FLOW_MAX_WORK = 3.1e7;

/** Flow values below this are rounding, not capacity left. */
const EPSILON = 1e-12;

export function flowWork(layers: number, n: number): number {
  return layers * n ** 4;
}

/** Why attention flow is not offered for this size, or undefined when it is. */
export function flowRefusal(layers: number, n: number, maxWork = FLOW_MAX_WORK): string | undefined {
  if (flowWork(layers, n) <= maxWork) return undefined;
  const largest = Math.floor((maxWork / layers) ** 0.25);
  return `attention flow is offered up to ${largest} tokens for ${layers} layers (layers × tokens⁴ ≤ ${maxWork.toExponential(1)}); this input has ${n}`;
}

/** Residual graph in compressed rows: each edge stored with its reverse (capacity 0) beside it. */
interface Network {
  nodeCount: number;
  /** Edges of node v: first[v] … first[v + 1] − 1. */
  first: Int32Array;
  to: Int32Array;
  /** Index of the paired reverse edge. */
  reverse: Int32Array;
  capacity: Float64Array;
}

function network(augmented: readonly Float64Array[], n: number): Network {
  const layers = augmented.length;
  const nodeCount = (layers + 1) * n;
  const node = (layer: number, token: number) => layer * n + token;
  const pairs: [number, number, number][] = [];
  augmented.forEach((matrix, l) => {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) if (matrix[i * n + j] > 0) pairs.push([node(l + 1, i), node(l, j), matrix[i * n + j]]);
    }
  });
  const degree = new Int32Array(nodeCount + 1);
  for (const [from, to] of pairs) {
    degree[from]++;
    degree[to]++;
  }
  const first = new Int32Array(nodeCount + 1);
  for (let v = 0; v < nodeCount; v++) first[v + 1] = first[v] + degree[v];
  const fill = first.slice(0, nodeCount);
  const edgeCount = first[nodeCount];
  const to = new Int32Array(edgeCount);
  const reverse = new Int32Array(edgeCount);
  const capacity = new Float64Array(edgeCount);
  for (const [from, target, weight] of pairs) {
    const forward = fill[from]++;
    const backward = fill[target]++;
    to[forward] = target;
    to[backward] = from;
    capacity[forward] = weight;
    reverse[forward] = backward;
    reverse[backward] = forward;
  }
  return { nodeCount, first, to, reverse, capacity };
}

/** Dinic's maximum flow from source to sink; `residual` starts as a copy of the capacities. */
function maxFlow(net: Network, source: number, sink: number, residual: Float64Array, level: Int32Array, next: Int32Array, queue: Int32Array): number {
  let total = 0;
  for (;;) {
    level.fill(-1);
    level[source] = 0;
    let head = 0;
    let tail = 0;
    queue[tail++] = source;
    while (head < tail) {
      const v = queue[head++];
      for (let e = net.first[v]; e < net.first[v + 1]; e++) {
        const w = net.to[e];
        if (level[w] < 0 && residual[e] > EPSILON) {
          level[w] = level[v] + 1;
          queue[tail++] = w;
        }
      }
    }
    if (level[sink] < 0) return total;
    next.set(net.first.subarray(0, net.nodeCount));
    for (;;) {
      const pushed = push(net, source, sink, Infinity, residual, level, next);
      if (pushed <= EPSILON) break;
      total += pushed;
    }
  }
}

/** One augmenting path in the level graph (depth ≤ layers + 1), or 0. */
function push(net: Network, v: number, sink: number, limit: number, residual: Float64Array, level: Int32Array, next: Int32Array): number {
  if (v === sink) return limit;
  for (; next[v] < net.first[v + 1]; next[v]++) {
    const e = next[v];
    const w = net.to[e];
    if (level[w] !== level[v] + 1 || residual[e] <= EPSILON) continue;
    const pushed = push(net, w, sink, Math.min(limit, residual[e]), residual, level, next);
    if (pushed > EPSILON) {
      residual[e] -= pushed;
      residual[net.reverse[e]] += pushed;
      return pushed;
    }
  }
  return 0;
}

/**
 * The attention flow [n × n] from the layers' head-means (each [n × n], layer 0 first): row i
 * is output position i, column j input token j, rows summing to 1. Throws a RangeError past
 * `maxWork` (the bench alone raises it, to time both sides of the limit).
 */
export function attentionFlow(headMeans: readonly Float64Array[], n: number, maxWork = FLOW_MAX_WORK): Float64Array {
  const refusal = flowRefusal(headMeans.length, n, maxWork);
  if (refusal) throw new RangeError(refusal);
  const net = network(
    headMeans.map((mean) => withResidual(mean, n)),
    n,
  );
  const top = headMeans.length * n;
  const residual = new Float64Array(net.capacity.length);
  const level = new Int32Array(net.nodeCount);
  const next = new Int32Array(net.nodeCount);
  const queue = new Int32Array(net.nodeCount);
  const flow = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) {
      residual.set(net.capacity);
      const value = maxFlow(net, top + i, j, residual, level, next, queue);
      flow[i * n + j] = value;
      sum += value;
    }
    if (sum > 0) for (let j = 0; j < n; j++) flow[i * n + j] /= sum;
  }
  return flow;
}
