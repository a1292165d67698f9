// One head of a model run as a problem the panel shows like any other: the matrices of its
// step-by-step spec as definitions with no place in a text (the debugger's arrays are the same),
// so spec, engine and panel never learn the numbers came from a model.
import { defaultOptions } from '../parse/directive';
import type { AttentionSpec, Matrix, MatrixDef, Problem, Range, Role } from '../types';

const NOWHERE: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** The spec's inputs under the names a note would give them. */
const NAMED: { role: Role; name: string; of: (spec: AttentionSpec) => Matrix | undefined }[] = [
  { role: 'X', name: 'X', of: (spec) => spec.X },
  { role: 'WQ', name: 'W_Q', of: (spec) => spec.WQ?.[0] },
  { role: 'WK', name: 'W_K', of: (spec) => spec.WK?.[0] },
  { role: 'WV', name: 'W_V', of: (spec) => spec.WV?.[0] },
  { role: 'Q', name: 'Q', of: (spec) => spec.Q },
  { role: 'K', name: 'K', of: (spec) => spec.K },
  { role: 'V', name: 'V', of: (spec) => spec.V },
];

export function headProblem(spec: AttentionSpec): Problem {
  const matrices: MatrixDef[] = NAMED.flatMap(({ role, name, of }) => {
    const value = of(spec);
    if (!value) return [];
    // Definitions hold float64 as read; the run itself keeps the spec's float32 numbers.
    const def: MatrixDef = { name, role, value: { rows: value.rows, cols: value.cols, data: Float64Array.from(value.data) }, boolean: false, nameRange: NOWHERE, range: NOWHERE, cellOffsets: new Uint32Array(0) };
    return [def];
  });
  const problem: Problem = { index: 0, range: NOWHERE, options: spec.options, matrices };
  if (spec.options.name !== undefined) problem.name = spec.options.name;
  if (spec.tokens) problem.tokens = spec.tokens;
  return problem;
}

/** A head that could not be drilled into, by its name: the panel shows why in its place. */
export function unreadHeadProblem(name: string): Problem {
  return { index: 0, name, range: NOWHERE, options: defaultOptions(), matrices: [] };
}
