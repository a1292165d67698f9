// A larger problem's Variants and FlashAttention views (past variantsModel.ts's MAX_TOKENS): one
// head's, or the walk of one query tile, computed in the worker from the run's spec when the page
// shows them — never with the run, so a 1024-token edit pays nothing for tabs no one opened.
// Matrices are pooled to small cards (VARIANT_CELLS_PER_SIDE), the walk to MAX_WALK_STEPS key
// tiles. Pure, like model.ts: the worker, the tests and the benchmarks call the same functions.
import { flashWalk } from '../core/engine/flash';
import { headParts, headWeights } from '../core/engine/attention';
import { matmulTransB, zeros } from '../core/engine/kernels';
import { bindScores } from '../core/engine/scores';
import { alibiBias, headSlope, modifyScores } from '../core/engine/variants';
import type { AttentionResult, AttentionSpec, Matrix } from '../core/types';
import type { FlashView, ResultView, VariantsAnswer, VariantsQuery, VariantsView } from '../protocol';
import { viewOf } from './matrixView';
import { conventions, explainedWhole, maskView, scaled } from './variantsModel';

/** Side of the variant cards' overviews: small plots beside each other, coarser than the steps'. */
export const VARIANT_CELLS_PER_SIDE = 128;
/** Key tiles one walk takes at most: its steps. */
export const MAX_WALK_STEPS = 64;
/** Largest tile side offered once a smaller one bounds the steps: each step lists a tile's rows. */
const MAX_TILE_SIDE = 64;

/** What the page needs to ask for a larger result's views ({} for a small one, which has them all). */
export function onDemandViewsOf(spec: AttentionSpec, result: AttentionResult): Pick<ResultView, 'onDemand'> {
  const first = result.heads[0];
  if (!first || explainedWhole(result) || result.givenOnly) return {};
  const { rows: queries, cols: keys } = first.weights;
  return { onDemand: { conventions: conventions(spec), tileSides: tileSidesOf(keys), queries, keys } };
}

/** Square tile sides: the smallest power of two (from 2) whose walk takes ≤ MAX_WALK_STEPS key
 * tiles, and its doubles up to MAX_TILE_SIDE; three at most. */
export function tileSidesOf(keys: number): number[] {
  const smallest = 2 ** Math.max(1, Math.ceil(Math.log2(Math.max(1, keys / MAX_WALK_STEPS))));
  return [smallest, smallest * 2, smallest * 4].filter((side) => side === smallest || side <= MAX_TILE_SIDE);
}

/**
 * The answer to one query about `spec`'s run; `output`: the head's output as the run computed it
 * (a walk is compared with it). A head, tile side or query tile the problem does not have is a
 * RangeError that says which exist.
 */
export function answerVariants(spec: AttentionSpec, query: VariantsQuery, output?: Matrix): VariantsAnswer {
  const heads = spec.options.heads;
  if (!(Number.isInteger(query.head) && query.head >= 0 && query.head < heads)) {
    throw new RangeError(`head ${query.head + 1} does not exist: this problem has ${heads} head${heads === 1 ? '' : 's'}`);
  }
  return query.kind === 'variants' ? headVariants(spec, query.head) : { ...query, walk: tileWalk(spec, query, output) };
}

function headVariants(spec: AttentionSpec, h: number): Extract<VariantsAnswer, { kind: 'variants' }> {
  const o = spec.options;
  const dtype = o.dtype;
  const parts = headParts(spec, h);
  const pool = (m: Matrix) => viewOf(m, undefined, undefined, VARIANT_CELLS_PER_SIDE);
  const mine: VariantsView['heads'][number] = {};
  const steps: Extract<VariantsAnswer, { kind: 'variants' }>['steps'] = {};
  const variants: VariantsView = { conventions: conventions(spec), heads: [mine] };
  if (o.rope !== undefined || o.softcap !== undefined) {
    const scores = zeros(parts.Q.rows, parts.K.rows, dtype);
    bindScores(parts.scoreParameters, parts.Q, parts.K, dtype).rows(scores, 0, scores.rows);
    if (o.rope !== undefined) {
      const before = zeros(parts.unturnedQ.rows, parts.unturnedK.rows, 'float64');
      matmulTransB(before, parts.unturnedQ, parts.unturnedK);
      mine.unrotatedScores = pool(before);
      steps.scores = pool(scores);
    }
    if (o.softcap !== undefined) {
      mine.uncapped = pool(scaled(scores, parts.modifier.scale));
      const capped = zeros(scores.rows, scores.cols, dtype);
      modifyScores(capped, scores, parts.modifier, 0, scores.rows);
      steps.scaled = pool(capped);
    }
  }
  if (o.alibi) {
    const slope = headSlope(spec, h);
    mine.alibi = { slope, bias: pool(alibiBias(slope, parts.positions, 'float64')) };
  }
  if (parts.mask) variants.mask = maskView(parts.mask, { heads: o.heads, dK: parts.Q.cols, dV: parts.V.cols }, VARIANT_CELLS_PER_SIDE);
  if (o.decode) {
    const full = headWeights({ ...spec, options: { ...o, decode: undefined } }, h);
    const step = headWeights(spec, h);
    mine.decodeFull = pool(full);
    steps.weights = pool(step);
    variants.decode = { row: full.rows - 1, maxDifference: lastRowDifference(step, full, parts.V) };
  }
  return { kind: 'variants', head: h, variants, steps };
}

/** max |step · V − (the full run's last row) · V|: the head's output both ways. */
function lastRowDifference(step: Matrix, full: Matrix, V: Matrix): number {
  const last = (full.rows - 1) * full.cols;
  let largest = 0;
  for (let c = 0; c < V.cols; c++) {
    let fromStep = 0;
    let fromFull = 0;
    for (let j = 0; j < V.rows; j++) {
      fromStep += step.data[j] * V.data[j * V.cols + c];
      fromFull += full.data[last + j] * V.data[j * V.cols + c];
    }
    const difference = Math.abs(fromStep - fromFull);
    if (!(difference <= largest)) largest = difference; // NaN stays visible
  }
  return largest;
}

function tileWalk(spec: AttentionSpec, query: Extract<VariantsQuery, { kind: 'flash' }>, output: Matrix | undefined): FlashView {
  if (!output) throw new RangeError('a walk needs the head’s output to end in');
  const sides = tileSidesOf(headParts(spec, query.head).K.rows);
  if (!sides.includes(query.tileSide)) throw new RangeError(`tiles of ${query.tileSide} are not offered: ${sides.join(', ')}`);
  const { output: walked, ...shown } = flashWalk(spec, query.head, query.tileSide, query.tileSide, query.queryTile);
  const first = query.queryTile * query.tileSide;
  const end = Math.min(output.rows, first + query.tileSide) * output.cols;
  let maxDifference = 0;
  for (let p = first * output.cols; p < end; p++) {
    const difference = Math.abs(walked.data[p] - output.data[p]);
    if (!(difference <= maxDifference)) maxDifference = difference;
  }
  return { ...shown, maxDifference };
}
