// Mixtures of experts (Mixtral, Qwen2-MoE, OLMoE, Qwen3-MoE), one MLP step of the forward. The
// routing is data — config.ts's MoeConfig, and layout.ts's ExpertsLayout naming the weights — and
// this is the routed MLP itself: the router's softmax, the top-k (renormalised when the config
// asks), only the chosen experts' rows run (each expert's tokens gathered, its MLP on them,
// scattered back times their weights), and Qwen2-MoE's shared expert behind its sigmoid gate. The
// routing is recorded as it is used.
//
// Profiled before the experts were grouped (OLMoE-shaped, 2 layers, 128 tokens, ONNX Runtime, load
// 12–17 on 2 cores): streamed, widening bf16 in JavaScript took 5.0 s of the main thread's 10.8 and
// the 128 products 1.3 s, one after another (each expert read, widened, then run while nothing
// else happened); resident, making one pre-packed session per expert took 9.0 s and the garbage
// collector 2.1 s of a first run's 18 s (the second run: 0.8 s of CPU).
import type { MoeConfig } from './config';
import type { ExpertsLayout, LayerLayout, LinearLayout, MlpLayout } from './layout';
import { ModelFileError, type Weights } from './weights';

/** What the mixture needs of the forward that runs it (ModelForward): its linear layers and MLPs on the chosen backend. */
export interface ExpertsForward {
  linear(x: Float32Array, n: number, L: LinearLayout): Promise<Float32Array>;
  mlp(x: Float32Array, n: number, L: MlpLayout): Promise<Float32Array>;
  /** Several MLPs each on its own rows of x (the parts' rows one after another), in one backend call. */
  mlps(x: Float32Array, parts: { rows: number; layout: MlpLayout }[]): Promise<Float32Array>;
}

/**
 * Float32 bytes of expert weights run by one backend call (at least one expert): OLMoE's experts
 * (25 MB each) 5 at a time, so a layer's 64 are 13 calls, not 64 hand-offs to ONNX Runtime's
 * threads; two groups' weights are in memory at once (one computing, the next being read).
 */
const EXPERT_GROUP_BYTES = 128 * 2 ** 20;

/**
 * Memory a sparse layer's experts take while they run on read weights (not resident): two groups
 * at once, each at most EXPERT_GROUP_BYTES or one expert when that is larger, 16-bit weights held
 * as read and widened (1.5 × the float32 bytes).
 */
export function expertsInFlightBytes(L: LayerLayout): number {
  return L.experts ? 2 * 1.5 * Math.max(EXPERT_GROUP_BYTES, ...L.experts.experts.map(expertBytes)) : 0;
}

/** An expert MLP's float32 weight bytes. */
function expertBytes(L: MlpLayout): number {
  return [L.up, L.gate, L.down].reduce((sum, P) => sum + (P ? P.in * P.out * 4 : 0), 0);
}

/**
 * Every expert tensor of every sparse layer is there, before the run reads anything large: an
 * expert no token of this text chooses is never read, and a checkpoint missing one is broken for
 * the next text. Names the first missing tensor.
 */
export function checkExpertTensors(layers: readonly LayerLayout[], weights: Weights): void {
  for (const [index, L] of layers.entries()) {
    if (!L.experts) continue;
    refuseFusedExperts(index, weights);
    const { router, experts, shared } = L.experts;
    const parts: [LinearLayout | undefined, string][] = [[router, 'router'], ...experts.flatMap((e, i) => [e.gate, e.up, e.down].map((P): [LinearLayout | undefined, string] => [P, `expert ${i}`]))];
    if (shared) parts.push([shared.gate, 'shared expert'], [shared.up, 'shared expert'], [shared.down, 'shared expert'], [shared.sharedGate, 'shared expert gate']);
    for (const [P, what] of parts) {
      if (P && !weights.has(`${P.name}.weight`)) throw new ModelFileError(`the checkpoint has no tensor model.${P.name}.weight (layer ${index}'s ${what}; config.json asks for ${experts.length} experts)`);
    }
  }
}

/**
 * Transformers 5 holds a layer's experts as two 3-D tensors (conversion_mapping.py merges the
 * per-expert weights at load: mlp.experts.gate_up_proj [experts, 2 × intermediate, hidden], each
 * expert's gate rows then its up rows, and mlp.experts.down_proj [experts, hidden, intermediate]),
 * and a checkpoint saved from that form keeps them so. Not read yet: said in one line, rather than
 * "no tensor …experts.0…".
 */
function refuseFusedExperts(index: number, weights: Weights): void {
  const fused = [`layers.${index}.mlp.experts.gate_up_proj`, `layers.${index}.mlp.experts.down_proj`].find((name) => weights.has(name));
  if (!fused) return;
  throw new ModelFileError(
    `the checkpoint stores layer ${index}'s experts fused into 3-D tensors (model.${fused}: gate_up_proj [experts, 2 × intermediate, hidden], down_proj [experts, hidden, intermediate], the layout transformers 5 loads them into), which Attention Lens does not read yet: it reads one tensor per expert weight (model.layers.${index}.mlp.experts.0.gate_proj.weight, …), as the Hub's checkpoints store them`,
  );
}

/** A sparse layer's linear layers (router, experts, shared expert and its gate): what a resident model holds of it in float32. */
export function expertLinears(L: LayerLayout): LinearLayout[] {
  if (!L.experts) return [];
  const { router, experts, shared } = L.experts;
  const mlp = (M: MlpLayout): LinearLayout[] => [M.up, M.down, ...(M.gate ? [M.gate] : [])];
  return [router, ...experts.flatMap(mlp), ...(shared ? [...mlp(shared), shared.sharedGate] : [])];
}

/** One layer's routing: per token, its experts by decreasing weight and each weight as it multiplies that expert's output. */
export interface LayerRouting {
  topK: number;
  /** [n × topK] expert indices. */
  experts: Int32Array;
  /** [n × topK] weights (after the top-k renormalisation when the config asks). */
  weights: Float32Array;
}

/** A run's routing: per layer, undefined for a dense layer of an MoE model. */
export interface ModelRouting {
  experts: number;
  topK: number;
  layers: (LayerRouting | undefined)[];
}

/** [layer][position] → the token's [expert index, weight] pairs by decreasing weight ([] in a dense layer): the CLI's JSON and the heads page's grid. */
export function routingPairs(routing: ModelRouting, n: number): [number, number][][][] {
  return routing.layers.map((layer) =>
    Array.from({ length: n }, (_, t) => (layer ? Array.from({ length: layer.topK }, (_, k): [number, number] => [layer.experts[t * layer.topK + k], layer.weights[t * layer.topK + k]]) : [])),
  );
}

/** The top-k of each row's softmax of router logits [n × E], as the modeling files compute it. */
export function route(logits: Float32Array, n: number, experts: number, topK: number, normTopK: boolean): LayerRouting {
  const chosen = new Int32Array(n * topK);
  const weights = new Float32Array(n * topK);
  const probabilities = new Float64Array(experts);
  const order = Array.from({ length: experts }, (_, e) => e);
  for (let t = 0; t < n; t++) {
    const row = logits.subarray(t * experts, (t + 1) * experts);
    let max = -Infinity;
    for (const v of row) if (v > max) max = v;
    let sum = 0;
    for (let e = 0; e < experts; e++) sum += probabilities[e] = Math.exp(row[e] - max);
    // Decreasing probability; equal ones by index (torch.topk's order on ties is not specified).
    order.sort((a, b) => probabilities[b] - probabilities[a] || a - b);
    let kept = 0;
    for (let k = 0; k < topK; k++) kept += probabilities[order[k]] / sum;
    for (let k = 0; k < topK; k++) {
      chosen[t * topK + k] = order[k];
      const p = probabilities[order[k]] / sum;
      weights[t * topK + k] = normTopK ? p / kept : p;
    }
  }
  return { topK, experts: chosen, weights };
}

/**
 * The mixture on x [n × hidden]: the router, then each chosen expert on its own tokens' rows only
 * (gathered, run, scattered back times the token's weight), plus Qwen2-MoE's gated shared expert.
 */
export async function mixtureOfExperts(forward: ExpertsForward, x: Float32Array, n: number, layout: ExpertsLayout, moe: MoeConfig): Promise<{ output: Float32Array; routing: LayerRouting }> {
  const hidden = layout.router.in;
  const routing = route(await forward.linear(x, n, layout.router), n, moe.experts, moe.topK, moe.normTopK);
  const out = new Float32Array(n * hidden);
  // Each expert's tokens and their slot in the token's top-k, in token order; an expert no token chose is not read.
  const tokensOf: number[][] = Array.from({ length: moe.experts }, () => []);
  routing.experts.forEach((e, slot) => tokensOf[e].push(slot));
  const chosen = tokensOf.flatMap((slots, e) => (slots.length ? [e] : []));
  // The chosen experts in groups of one backend call each, all asked for at once: the forward
  // reads a group's weights while the backend runs the one before.
  const groups: number[][] = [];
  let bytes = 0;
  for (const e of chosen) {
    const size = expertBytes(layout.experts[e]);
    if (!groups.length || bytes + size > EXPERT_GROUP_BYTES) {
      groups.push([]);
      bytes = 0;
    }
    (groups.at(-1) as number[]).push(e);
    bytes += size;
  }
  const results = await Promise.all(
    groups.map((group) => {
      const slots = group.flatMap((e) => tokensOf[e]);
      const rows = new Float32Array(slots.length * hidden);
      slots.forEach((slot, r) => rows.set(x.subarray(Math.floor(slot / moe.topK) * hidden, (Math.floor(slot / moe.topK) + 1) * hidden), r * hidden));
      return forward.mlps(rows, group.map((e) => ({ rows: tokensOf[e].length, layout: layout.experts[e] }))).then((y) => ({ slots, y }));
    }),
  );
  for (const { slots, y } of results) {
    slots.forEach((slot, r) => {
      const weight = routing.weights[slot];
      const at = Math.floor(slot / moe.topK) * hidden;
      for (let j = 0; j < hidden; j++) out[at + j] += weight * y[r * hidden + j];
    });
  }
  if (layout.shared) {
    const shared = await forward.mlp(x, n, layout.shared);
    const gate = await forward.linear(x, n, layout.shared.sharedGate);
    for (let t = 0; t < n; t++) {
      const g = 1 / (1 + Math.exp(-gate[t]));
      for (let j = 0; j < hidden; j++) out[t * hidden + j] += g * shared[t * hidden + j];
    }
  }
  return { output: out, routing };
}
