// The panel's views of the variants (RoPE, softcap, ALiBi, masks, decode) and of FlashAttention's
// online softmax, from one problem's spec and result. Pure, like model.ts. Built here, every head
// and every walk at once, for problems up to MAX_TOKENS queries and keys, whose cells one reads
// one by one; a larger problem's are asked for one head and one query tile at a time and computed
// in the worker (variantsOnDemand.ts): at n = 1024 every head's walks would be n² steps' worth.
import { type AttentionShape, maskSavings } from '../core/engine/cost';
import { flashWalk } from '../core/engine/flash';
import { matmulTransB, zeros } from '../core/engine/kernels';
import { scoreScale } from '../core/engine/scores';
import { alibiBias, headSlope, positionsOf } from '../core/engine/variants';
import { buildSpec } from '../core/spec';
import type { AttentionResult, AttentionSpec, Matrix, Problem } from '../core/types';
import type { FlashView, ResultView, VariantsView } from '../protocol';
import { viewOf } from './matrixView';

export const MAX_TOKENS = 64;

const cache = new WeakMap<AttentionResult, Pick<ResultView, 'variants' | 'flash'>>();

/** Whether a result is small enough for every head's variant views and walks to go with it. */
export function explainedWhole(result: AttentionResult): boolean {
  const first = result.heads[0];
  return Boolean(first) && first.weights.cols <= MAX_TOKENS && (result.decode?.row ?? first.weights.rows) < MAX_TOKENS;
}

/** The variant and FlashAttention views of `problem`'s `result` ({} when too large). */
export function variantViewsOf(problem: Problem, result: AttentionResult): Pick<ResultView, 'variants' | 'flash'> {
  const cached = cache.get(result);
  if (cached) return cached;
  const spec = explainedWhole(result) ? buildSpec(problem).spec : undefined;
  const views = spec ? { ...variantsView(spec, result), ...flashViews(spec, result) } : {};
  cache.set(result, views);
  return views;
}

export function conventions(spec: AttentionSpec): string[] {
  const o = spec.options;
  const out: string[] = [];
  if (o.rope !== undefined) {
    out.push(`RoPE, base ${o.rope}: pair k of a head of width d turns by position·${o.rope}^(−2k/d); pairs ${o.ropeLayout === 'interleaved' ? '(x₂ₖ, x₂ₖ₊₁) — interleaved (GPT-J style)' : '(xₖ, xₖ₊d/2) — rotate half (Llama style)'}`);
  }
  if (o.temperature !== undefined) out.push(`temperature ${o.temperature}: scores divided by ${o.temperature}`);
  if (o.softcap !== undefined) out.push(`softcap ${o.softcap}: s → ${o.softcap}·tanh(s/${o.softcap}) (Gemma 2)`);
  if (o.alibi) out.push(`ALiBi: −m·|i − j| added per head, slopes ${spec.alibiSlopes ? 'from alibi_slopes' : '2^(−8h/H) (the paper\u2019s)'}`);
  if (o.window !== undefined) out.push(o.causal !== undefined || o.prefix !== undefined ? `sliding window ${o.window}: the ${o.window} keys up to the query` : `sliding window ${o.window}: keys with |i − j| < ${o.window}`);
  if (o.sinks !== undefined) out.push(`attention sinks: the first ${o.sinks} key${o.sinks === 1 ? '' : 's'} stay visible past the window`);
  if (spec.segments) out.push('documents: attention stays inside equal segment ids');
  if (o.prefix !== undefined) out.push(`prefix-LM: the first ${o.prefix} positions visible to every query, causal after`);
  if (o.decode) out.push('decode: the last query alone against every cached key and value');
  return out;
}

function variantsView(spec: AttentionSpec, result: AttentionResult): Pick<ResultView, 'variants'> {
  const named = conventions(spec);
  if (named.length === 0) return {};
  const o = spec.options;
  const first = result.heads[0];
  const positions = positionsOf(spec, result.decode ? result.decode.row + 1 : first.weights.rows, first.weights.cols);
  const variants: VariantsView = {
    conventions: named,
    heads: result.heads.map((head, h) => {
      const scale = scoreScale(spec, head.Q.cols) / (o.temperature ?? 1);
      const views: VariantsView['heads'][number] = {};
      if (o.rope !== undefined) {
        const before = zeros(head.Q.rows, head.K.rows, 'float64');
        matmulTransB(before, head.Q, head.K);
        views.unrotatedScores = viewOf(before);
      }
      if (o.softcap !== undefined) views.uncapped = viewOf(scaled(head.scores, scale));
      if (o.alibi) {
        const slope = headSlope(spec, h);
        views.alibi = { slope, bias: viewOf(alibiBias(slope, positions, 'float64')) };
      }
      if (result.decode) views.decodeFull = viewOf(result.decode.fullWeights[h]);
      return views;
    }),
  };
  if (first.mask) variants.mask = maskView(first.mask, { heads: result.heads.length, dK: first.Q.cols, dV: first.V.cols });
  if (result.decode) {
    variants.decode = { row: result.decode.row, maxDifference: result.decode.maxDifference };
  }
  return { variants };
}

/** The mask's structure (1 = may attend, 0 = blocked), pooled to `maxSide`, and what it saves. */
export function maskView(mask: Matrix, shape: Pick<AttentionShape, 'heads' | 'dK' | 'dV'>, maxSide?: number): NonNullable<VariantsView['mask']> {
  const visible = zeros(mask.rows, mask.cols, 'float64');
  mask.data.forEach((x, p) => (visible.data[p] = x === -Infinity ? 0 : 1));
  return { visible: viewOf(visible, undefined, undefined, maxSide), ...maskSavings(mask, shape) };
}

export function scaled(m: Matrix, factor: number): Matrix {
  const out = zeros(m.rows, m.cols, 'float64');
  m.data.forEach((x, p) => (out.data[p] = x * factor));
  return out;
}

/** Tile sides offered: powers of two below the sequence length, at most three, the walk ≤ 256 steps. */
function tileSizes(queries: number, keys: number): number[] {
  const sizes: number[] = [];
  for (let side = 1; side < Math.max(queries, keys) && sizes.length < 3; side *= 2) {
    if (Math.ceil(queries / side) * Math.ceil(keys / side) <= 256 && side > 1) sizes.push(side);
  }
  return sizes.length > 0 ? sizes : [Math.max(1, keys)];
}

/** Every head's walks, of every score function (each has a tiled form: engine/flash.ts). */
function flashViews(spec: AttentionSpec, result: AttentionResult): Pick<ResultView, 'flash'> {
  const flash = result.heads.map((head, h): FlashView[] =>
    tileSizes(head.weights.rows, head.weights.cols).map((side) => {
      const { output, ...shown } = flashWalk(spec, h, side, side);
      let maxDifference = 0;
      output.data.forEach((x, p) => (maxDifference = Math.max(maxDifference, Math.abs(x - head.output.data[p]))));
      return { ...shown, maxDifference };
    }));
  return { flash };
}
