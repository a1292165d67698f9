// Scaled scores travel as a rule, not as numbers, when the rule gives every number exactly: each
// head's scaled view is its scores view times the scale, rounded to the result's dtype, in all but
// softcapped (or otherwise modified) runs. Checked entry by entry before it is relied on, so the
// page rebuilds the very bits the engine computed; half the bytes of a 512-token update on screen
// (scores and scaled: 4 MB → 2 MB). Pure: the host strips, the page restores.
import type { MatrixView, ResultView } from '../protocol';
import { isDeferred } from './deferral';

/** A scaled view posted without its numbers: they are `scores × scale`, rounded to `dtype`. */
export type DerivedView = MatrixView & { scaledFrom: { scale: number } };

const isDerived = (view: MatrixView): view is DerivedView => (view as Partial<DerivedView>).scaledFrom !== undefined;

/** `scores × scale` rounded to the dtype, into `out` (a loop, not a closure per entry: 262,144
 * entries for a 512-token head, on the host's event loop and the page's). */
function scaleInto(out: Float64Array | Float32Array, scores: Float64Array | Float32Array, scale: number, dtype: ResultView['dtype']): void {
  if (dtype === 'float32') for (let i = 0; i < scores.length; i++) out[i] = Math.fround(scores[i] * scale);
  else for (let i = 0; i < scores.length; i++) out[i] = scores[i] * scale;
}

/** Whether the rule gives every entry of `scaled`, bit for bit (NaN as NaN, −0 as −0). */
function reproduces(scores: MatrixView, scaled: MatrixView, scale: number, dtype: ResultView['dtype']): boolean {
  const from = scores.data;
  const wanted = scaled.data;
  const float32 = dtype === 'float32';
  for (let i = 0; i < from.length; i++) {
    const value = float32 ? Math.fround(from[i] * scale) : from[i] * scale;
    const want = wanted[i];
    if (value === want ? value === 0 && 1 / value !== 1 / want : value === value || want === want) return false;
  }
  return true;
}

const sameCells = (a: MatrixView, b: MatrixView): boolean =>
  a.rows === b.rows && a.cols === b.cols && a.rowStart === b.rowStart && a.colStart === b.colStart && a.rowBlock === b.rowBlock && a.colBlock === b.colBlock;

/** The scale that turns `scores` into `scaled` exactly, entry by entry, if there is one. */
function exactScale(scores: MatrixView, scaled: MatrixView, dK: number, dtype: ResultView['dtype']): number | undefined {
  if (!sameCells(scores, scaled) || scores.data.length === 0) return undefined;
  const first = scores.data.findIndex((value) => Number.isFinite(value) && value !== 0);
  if (first < 0) return undefined;
  // The ratio of one entry, or 1/√d_k — each also as a float32, the WebAssembly kernels' factor
  // in float32 runs: whichever reproduces every entry.
  const ratio = scaled.data[first] / scores.data[first];
  const candidates = [ratio, 1 / Math.sqrt(dK), Math.fround(ratio), Math.fround(1 / Math.sqrt(dK))];
  return candidates.find((scale) => reproduces(scores, scaled, scale, dtype));
}

/** The result as posted: each head's scaled view a rule where the rule is exact (else as it was). */
export function withScaledAsRule(result: ResultView): ResultView {
  const rules = new Map<MatrixView, DerivedView>();
  const heads = result.heads.map((head) => {
    if (head.scaled === head.scores || isDeferred(head.scaled) || isDeferred(head.scores)) return head;
    let rule = rules.get(head.scaled);
    if (!rule) {
      const scale = exactScale(head.scores, head.scaled, head.Q.sourceCols, result.dtype);
      if (scale === undefined) return head;
      rules.set(head.scaled, (rule = { ...head.scaled, data: new Float64Array(0), scaledFrom: { scale } }));
    }
    // masked is the same view as scaled when nothing is masked: it follows.
    return { ...head, scaled: rule, masked: head.masked === head.scaled ? rule : head.masked };
  });
  return rules.size > 0 ? { ...result, heads } : result;
}

/** The result as the page shows it: every rule replaced by the numbers it gives. */
export function withScaledNumbers(result: ResultView): ResultView {
  const rebuilt = new Map<MatrixView, MatrixView>();
  const numbersOf = (rule: DerivedView, scores: MatrixView): MatrixView => {
    let view = rebuilt.get(rule);
    if (!view) {
      const { scaledFrom, ...shape } = rule;
      const data = new Float64Array(scores.data.length);
      scaleInto(data, scores.data, scaledFrom.scale, result.dtype);
      rebuilt.set(rule, (view = { ...shape, data }));
    }
    return view;
  };
  if (!result.heads.some((head) => isDerived(head.scaled))) return result;
  const heads = result.heads.map((head) => {
    if (!isDerived(head.scaled)) return head;
    const scaled = numbersOf(head.scaled, head.scores);
    return { ...head, scaled, masked: isDerived(head.masked) ? scaled : head.masked };
  });
  return { ...result, heads };
}
