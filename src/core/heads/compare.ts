// Comparing two runs of the same shape (two texts of equal length, or two checkpoints on one
// text), head by head:
//   divergence = mean over queries of JSD(a_i, b_i) = ½KL(a‖m) + ½KL(b‖m), m = (a + b)/2, in nats
//   (0·ln 0 = 0, so it lies in [0, ln 2]), computed in divergence.ts; the difference B − A of one
//   head on demand.
// Pure functions with no WebAssembly (the page and the host import this module): no `vscode` import.
import { quantity } from '../words';
import { blocking } from './pool';
import type { AttentionKind, AttentionStack } from './stack';

/** The counts two runs must share to be compared (an AttentionStack's, or the page's StackInfo). */
export type StackShape = Pick<AttentionStack, 'layerCount' | 'headCount' | 'queryCount' | 'keyCount'>;

export interface RankedHead {
  layer: number;
  head: number;
  value: number;
}

/** Why two stacks cannot be compared, or undefined when they can. */
export function incomparability(a: StackShape, b: StackShape): string | undefined {
  const shape = (s: StackShape) => `${quantity(s.layerCount, 'layer')} × ${quantity(s.headCount, 'head')} × ${s.queryCount}×${s.keyCount}`;
  return shape(a) === shape(b) ? undefined : `cannot compare runs of different shapes: ${shape(a)} against ${shape(b)}`;
}

/** The ways in to a comparison: a model run's page offers text and checkpoint, a saved file's, file. */
export type CompareWith = 'text' | 'checkpoint' | 'file';

/** A run's shape as the page knows it (StackInfo): its counts, and for a run of several kinds of
 * attention (an encoder–decoder's) each kind's, or the one kind it has. */
export type RunShape = StackShape & { kind?: AttentionKind; kinds?: (StackShape & { kind: AttentionKind })[] };

/** For each kind of attention A has, why B's of the same kind cannot be compared with it; a kind
 * absent from the answer compares. Undefined when the runs are not both encoder–decoder runs. */
export type KindRefusals = Partial<Record<AttentionKind, string>>;

/** The kinds of a run of several, or its one named kind; undefined for a plain run (one kind, unnamed). */
function kindShapes(run: RunShape): (StackShape & { kind: AttentionKind })[] | undefined {
  return run.kinds ?? (run.kind ? [{ ...run, kind: run.kind }] : undefined);
}

/** Why kind `kind` of B cannot be compared with A's, said in the encoder–decoder's words: the
 * encoder's axes are the source, the decoder's the target, cross-attention's the target × source. */
function kindRefusal(kind: AttentionKind, a: StackShape | undefined, b: StackShape | undefined): string | undefined {
  if (!a || !b) return `${a ? 'B' : 'A'} has no ${kind} attention.`;
  const counts = (s: StackShape) => `${quantity(s.layerCount, 'layer')} × ${quantity(s.headCount, 'head')}`;
  if (counts(a) !== counts(b)) return `A’s ${kind} attention has ${counts(a)} and B’s ${counts(b)}: compare checkpoints of the same architecture.`;
  const lengths: string[] = [];
  const source = kind === 'decoder' ? undefined : [a.keyCount, b.keyCount];
  const target = kind === 'encoder' ? undefined : [a.queryCount, b.queryCount];
  if (source && source[0] !== source[1]) lengths.push(`B’s source is ${quantity(source[1], 'token')} long and A’s ${source[0]}`);
  if (target && target[0] !== target[1]) lengths.push(`B’s target is ${quantity(target[1], 'token')} long and A’s ${target[0]}`);
  return lengths.length ? `${lengths.join(', and ')}: the ${kind} attention compares ${kind === 'encoder' ? 'sources' : kind === 'decoder' ? 'targets' : 'sources and targets'} of equal length.` : undefined;
}

/** Per kind of A, why B cannot be compared there (KindRefusals); undefined unless both runs have named kinds. */
export function kindRefusals(a: RunShape, b: RunShape): KindRefusals | undefined {
  const kindsA = kindShapes(a);
  const kindsB = kindShapes(b);
  if (!kindsA || !kindsB) return undefined;
  const refusals: KindRefusals = {};
  for (const { kind, ...shape } of kindsA) {
    const refusal = kindRefusal(kind, shape, kindsB.find((other) => other.kind === kind));
    if (refusal) refusals[kind] = refusal;
  }
  return refusals;
}

/** Why B cannot be compared with A, said for the way B was chosen (the heads page's Compare tab).
 * Encoder–decoder runs compare kind by kind: refused only when no kind of A compares with B's. */
export function refusalToCompare(a: RunShape, b: RunShape, how: CompareWith): string | undefined {
  const kindsA = kindShapes(a);
  const kindsB = kindShapes(b);
  if (Boolean(kindsA) !== Boolean(kindsB)) {
    const [named, plain] = kindsA ? ['A', 'B'] : ['B', 'A'];
    const kinds = (kindsA ?? kindsB)!.map(({ kind }) => kind).join(', ');
    return `${named} is an encoder–decoder run (${kinds} attention) and ${plain} a run of one self-attention: their heads do not correspond, so they are not compared.`;
  }
  const byKind = kindRefusals(a, b);
  if (byKind) {
    const refused = kindsA!.map(({ kind }) => byKind[kind]);
    return refused.every(Boolean) ? (byKind.cross ?? refused[0]) : undefined;
  }
  const refusal = incomparability(a, b);
  if (!refusal) return undefined;
  if (how === 'text' && a.queryCount !== b.queryCount) return `B’s text is ${b.queryCount} tokens long and A’s ${a.queryCount}: compare texts of equal token length.`;
  return `${refusal}.${how === 'checkpoint' ? ' Compare checkpoints of the same architecture.' : ''}`;
}

/** Every head, the largest value first (ties: earlier layer, then head). */
export function ranked(values: readonly (readonly (number | null)[])[]): RankedHead[] {
  const heads: RankedHead[] = [];
  values.forEach((row, layer) =>
    row.forEach((value, head) => {
      if (value !== null) heads.push({ layer, head, value });
    }),
  );
  return heads.sort((x, y) => y.value - x.value || x.layer - y.layer || x.head - y.head);
}

/** B − A for one head, [queries × keys] row-major. */
export function difference(a: AttentionStack, b: AttentionStack, layer: number, head: number): Float64Array {
  const refusal = incomparability(a, b);
  if (refusal) throw new RangeError(refusal);
  const x = a.weights(layer, head);
  const y = b.weights(layer, head);
  const result = new Float64Array(x.length);
  for (let k = 0; k < x.length; k++) result[k] = y[k] - x[k];
  return result;
}

/** B − A of one head, pooled to rows × cols cells of rowBlock × colBlock entries (the last ones
 * partial). Each cell holds its block's entry of largest |B − A| (the first in row-major order on
 * ties): `difference` is B − A there, `a` and `b` the two weights, `at` its index query·keys + key. */
export interface DifferenceMap {
  layer: number;
  head: number;
  rows: number;
  cols: number;
  rowBlock: number;
  colBlock: number;
  difference: Float32Array;
  a: Float32Array;
  b: Float32Array;
  at: Int32Array;
}

/**
 * B − A for one head pooled to at most `side` × `side` cells (DifferenceMap). A cell keeps its
 * block's entry of largest |B − A| rather than a mean, so one sharp change is not averaged away
 * and the weights the hover reads are real entries of A and B.
 */
export function pooledDifference(a: AttentionStack, b: AttentionStack, layer: number, head: number, side: number): DifferenceMap {
  const change = difference(a, b, layer, head);
  const x = a.weights(layer, head);
  const y = b.weights(layer, head);
  const keys = a.keyCount;
  const { block: rowBlock, cells: rows } = blocking(a.queryCount, side);
  const { block: colBlock, cells: cols } = blocking(keys, side);
  const at = new Int32Array(rows * cols).fill(-1);
  const largest = new Float64Array(rows * cols).fill(-1);
  for (let query = 0; query < a.queryCount; query++) {
    const cellRow = Math.floor(query / rowBlock) * cols;
    for (let key = 0; key < keys; key++) {
      const cell = cellRow + Math.floor(key / colBlock);
      const size = Math.abs(change[query * keys + key]);
      if (size > largest[cell]) {
        largest[cell] = size;
        at[cell] = query * keys + key;
      }
    }
  }
  const pick = (values: ArrayLike<number>) => Float32Array.from(at, (index) => values[index]);
  return { layer, head, rows, cols, rowBlock, colBlock, difference: pick(change), a: pick(x), b: pick(y), at };
}

/** One row per head: `layer,head,divergence`, full precision. */
export function divergenceCsv(divergence: readonly (readonly number[])[]): string {
  const lines = ['layer,head,divergence'];
  divergence.forEach((row, layer) => row.forEach((value, head) => lines.push(`${layer},${head},${value}`)));
  return lines.join('\n') + '\n';
}

export function grid<T>(layers: number, heads: number, cell: (layer: number, head: number) => T): T[][] {
  return Array.from({ length: layers }, (_, layer) => Array.from({ length: heads }, (_, head) => cell(layer, head)));
}
