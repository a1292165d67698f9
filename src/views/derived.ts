// Views that travel as a rule, not as numbers, when the rule gives every number exactly: a head's
// scores are Q·Kᵀ of its own Q and K views (d_k columns, a few kB), and its scaled scores are the
// scores times the scale. The engine worker finds which rule reproduces every entry's bits (the
// reference engine sums in float64, the WebAssembly kernels in float32 with or without fused
// multiply-adds; softcapped, RoPE-turned or non-dot scores follow none) and notes it on the view
// (`annotateRules`); the host posts such a view without its numbers when the views it follows from
// go in the same post (`withoutRuledNumbers`); the page computes them (`withRuledNumbers`). A
// 512-token edit's scores and scaled scores on screen were 4 MB of a code-server websocket at
// ~20 MB/s; they are now 128 kB of Q and K and ~10 ms of the page's time. Pure.
import type { DeferredViews, HeadView, MatrixView, ResultView, ViewRule } from '../protocol';

type DType = ResultView['dtype'];
type QKRounding = Extract<ViewRule, { kind: 'QK' }>['rounding'];

const exact = (view: MatrixView): boolean => view.rowBlock === 1 && view.colBlock === 1 && view.rowStart === 0 && view.colStart === 0 && view.rows === view.sourceRows && view.cols === view.sourceCols;

/** Q·Kᵀ as the rule says, rows [r0, r1) into `out` (row-major, K.rows columns), in `dtype`. One
 * loop per rounding, nothing decided inside it: 4.2 M multiply-adds for a 512-token head. */
function productInto(out: Float64Array, Q: MatrixView, K: MatrixView, rounding: QKRounding, dtype: DType, r0 = 0, r1 = Q.rows): void {
  const [q, k, d, keys] = [Q.data, K.data, Q.cols, K.rows];
  const fround = Math.fround;
  for (let i = r0; i < r1; i++) {
    const row = i * d;
    const at = (i - r0) * keys;
    if (rounding === 'sum') {
      for (let j = 0; j < keys; j++) {
        const column = j * d;
        let sum = 0;
        for (let c = 0; c < d; c++) sum += q[row + c] * k[column + c];
        out[at + j] = sum;
      }
      if (dtype === 'float32') for (let j = 0; j < keys; j++) out[at + j] = fround(out[at + j]);
    } else if (rounding === 'steps') {
      for (let j = 0; j < keys; j++) {
        const column = j * d;
        let sum = 0;
        for (let c = 0; c < d; c++) sum = fround(sum + fround(q[row + c] * k[column + c]));
        out[at + j] = sum;
      }
    } else {
      for (let j = 0; j < keys; j++) {
        const column = j * d;
        let sum = 0;
        for (let c = 0; c < d; c++) sum = fround(sum + q[row + c] * k[column + c]);
        out[at + j] = sum;
      }
    }
  }
}

/** scores × scale rounded to the dtype, into `out`. */
function scaledInto(out: Float64Array, scores: Float64Array | Float32Array, scale: number, dtype: DType): void {
  if (dtype === 'float32') for (let i = 0; i < scores.length; i++) out[i] = Math.fround(scores[i] * scale);
  else for (let i = 0; i < scores.length; i++) out[i] = scores[i] * scale;
}

/** Whether `rebuilt` holds the first entries of `wanted` bit for bit (NaN as NaN, −0 as −0). */
function sameBits(rebuilt: Float64Array, wanted: Float64Array | Float32Array): boolean {
  for (let i = 0; i < rebuilt.length; i++) {
    const [value, want] = [rebuilt[i], wanted[i]];
    if (value === want ? value === 0 && 1 / value !== 1 / want : value === value || want === want) return false;
  }
  return true;
}

/** Beyond this many multiply-adds (~3 ns each, checked in the worker and done again by the page)
 * computing a head's scores costs more than their 8 bytes each take to travel (~20 MB/s). */
const MAX_RULED_PRODUCT = 2 ** 23;

/** The rounding under which Q·Kᵀ gives every score, if one does (a first row rules most out). */
function productRounding(head: HeadView, dtype: DType): QKRounding | undefined {
  const { Q, K, scores } = head;
  if (![Q, K, scores].every(exact) || Q.cols !== K.cols || scores.rows !== Q.rows || scores.cols !== K.rows || Q.rows === 0) return undefined;
  if (Q.rows * K.rows * Q.cols > MAX_RULED_PRODUCT) return undefined;
  const roundings: QKRounding[] = dtype === 'float64' ? ['sum'] : ['sum', 'steps', 'fused'];
  const firstRow = new Float64Array(K.rows);
  const reproduces = (rounding: QKRounding): boolean => {
    productInto(firstRow, Q, K, rounding, dtype, 0, 1);
    if (!sameBits(firstRow, scores.data)) return false;
    const all = new Float64Array(scores.data.length);
    productInto(all, Q, K, rounding, dtype);
    return sameBits(all, scores.data);
  };
  return roundings.find(reproduces);
}

/** The scale that turns the scores into the scaled scores exactly, if there is one. */
function exactScale(head: HeadView, dtype: DType): number | undefined {
  const { scores, scaled, Q } = head;
  if (scaled === scores || !exact(scores) || !exact(scaled) || scores.data.length !== scaled.data.length) return undefined;
  const first = scores.data.findIndex((value) => Number.isFinite(value) && value !== 0);
  if (first < 0) return undefined;
  // The ratio of one entry, or 1/√d_k — each also as a float32, the WebAssembly kernels' factor
  // in float32 runs: whichever reproduces every entry.
  const ratio = scaled.data[first] / scores.data[first];
  const rebuilt = new Float64Array(scores.data.length);
  return [ratio, 1 / Math.sqrt(Q.cols), Math.fround(ratio), Math.fround(1 / Math.sqrt(Q.cols))].find((scale) => {
    scaledInto(rebuilt, scores.data, scale, dtype);
    return sameBits(rebuilt, scaled.data);
  });
}

/** Notes on each head's scores and scaled views the rule that gives them exactly (the worker). */
export function annotateRules(result: ResultView): void {
  for (const head of result.heads) {
    const rounding = productRounding(head, result.dtype);
    if (rounding) head.scores.rule = { kind: 'QK', rounding };
    const scale = exactScale(head, result.dtype);
    if (scale !== undefined) head.scaled.rule = { kind: 'scaled', scale };
  }
}

export const withoutNumbers = (view: MatrixView): MatrixView => ({ ...view, data: new Float64Array(0) });
const travelsWithNumbers = (view: MatrixView): boolean => view.data.length === view.rows * view.cols;

/** The views a ruled view of this head follows from: what must go in the same post. */
export function sourcesOf(head: HeadView, view: MatrixView): MatrixView[] {
  if (view.rule?.kind === 'scaled') return [head.scores, ...sourcesOf(head, head.scores)];
  if (view.rule?.kind === 'QK') return [head.Q, head.K];
  return [];
}

/**
 * The result as posted: a ruled view without its numbers wherever the views it follows from go
 * with theirs (a view held back, deferral.ts, goes without).
 */
export function withoutRuledNumbers(result: ResultView): ResultView {
  const stripped = new Map<MatrixView, MatrixView>();
  const strip = (view: MatrixView) => {
    let bare = stripped.get(view);
    if (!bare) stripped.set(view, (bare = withoutNumbers(view)));
    return bare;
  };
  const heads = result.heads.map((head) => {
    const scoresRuled = head.scores.rule?.kind === 'QK' && travelsWithNumbers(head.scores) && travelsWithNumbers(head.Q) && travelsWithNumbers(head.K);
    const scaledRuled = head.scaled.rule?.kind === 'scaled' && travelsWithNumbers(head.scaled) && travelsWithNumbers(head.scores);
    if (!scoresRuled && !scaledRuled) return head;
    const scores = scoresRuled ? strip(head.scores) : head.scores;
    const scaled = scaledRuled ? strip(head.scaled) : head.scaled;
    return { ...head, scores, scaled, masked: head.masked === head.scaled ? scaled : head.masked };
  });
  return stripped.size > 0 ? { ...result, heads } : result;
}

/**
 * The views an update held back, as posted when the page asks for them: a ruled view without its
 * numbers. What it follows from is on the page by then: it went with the update (as numbers, or
 * as a rule of views that did) or comes in this same reply. A reply with one card on screen:
 * 2.1 → 1.2 MB for a 128-token, 4-head note; 4.5 → 2.4 MB for a 512-token head.
 */
export function heldBackWithoutRuledNumbers(views: DeferredViews): DeferredViews {
  return views.map((entry) => (entry.view.rule ? { ...entry, view: withoutNumbers(entry.view) } : entry));
}

/** The result as the page shows it: every view posted as a rule given its numbers. */
export function withRuledNumbers(result: ResultView): ResultView {
  const needsNumbers = (view: MatrixView) => view.rule !== undefined && view.data.length === 0 && view.rows * view.cols > 0;
  if (!result.heads.some((head) => needsNumbers(head.scores) || needsNumbers(head.scaled))) return result;
  const heads = result.heads.map((head) => {
    let { scores, scaled } = head;
    if (needsNumbers(scores) && scores.rule?.kind === 'QK') {
      const data = new Float64Array(scores.rows * scores.cols);
      productInto(data, head.Q, head.K, scores.rule.rounding, result.dtype);
      scores = { ...scores, data };
    }
    if (needsNumbers(scaled) && scaled.rule?.kind === 'scaled') {
      const data = new Float64Array(scaled.rows * scaled.cols);
      scaledInto(data, scores.data, scaled.rule.scale, result.dtype);
      scaled = { ...scaled, data };
    }
    // masked is the scaled view itself when nothing is masked.
    return { ...head, scores, scaled, masked: needsNumbers(head.masked) ? scaled : head.masked };
  });
  return { ...result, heads };
}
