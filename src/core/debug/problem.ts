// Variables of a paused frame → an attention problem: names mapped to roles by the file reader's
// rules (`q`, `query`, `W_Q`, `wq1`…), and the arrays read from them made into the same
// definitions a file gives, so spec, engine and panel never learn where the numbers came from.
import { defaultOptions } from '../parse/directive';
import { classifyName, roleLabel } from '../parse/names';
import type { MatrixDef, Problem, Range, Role } from '../types';
import type { ArrayRead } from './payload';

/** A variable in scope, as the adapter listed it. */
export interface ScopeVariable {
  name: string;
  /** What to evaluate to read it (the adapter's `evaluateName`, else the name). */
  expression: string;
  /** The scope it was listed in (`Locals`, `Globals`, `Local`, `Closure`…). */
  scope: string;
}

export interface RoleOf {
  role: Role;
  head?: number;
}

/** The role a variable name has for the file reader, if any. */
export function roleOfName(name: string): RoleOf | undefined {
  const meaning = classifyName(name);
  if (meaning.kind !== 'matrix') return undefined;
  return meaning.head === undefined ? { role: meaning.role } : { role: meaning.role, head: meaning.head };
}

/** Which axis labels a variable name gives (`tokens`, `key_tokens`), as in files; undefined for none. */
export function labelsOfName(name: string): 'tokens' | 'keyTokens' | undefined {
  const meaning = classifyName(name);
  return meaning.kind === 'tokens' ? (meaning.keys ? 'keyTokens' : 'tokens') : undefined;
}

/** `W_Q`, `W_Q (head 2)`. */
export function roleText({ role, head }: RoleOf): string {
  return head === undefined ? roleLabel(role) : `${roleLabel(role)} (head ${head + 1})`;
}

/** The variables whose names give a role; of several with one role, the innermost scope's (listed first) wins. */
export function matchRoles(variables: readonly ScopeVariable[]): (ScopeVariable & RoleOf)[] {
  const taken = new Set<string>();
  const matched: (ScopeVariable & RoleOf)[] = [];
  for (const variable of variables) {
    const role = roleOfName(variable.name);
    if (!role) continue;
    const key = `${role.role}/${role.head ?? ''}`;
    if (taken.has(key)) continue;
    taken.add(key);
    matched.push({ ...variable, ...role });
  }
  return matched;
}

const NOWHERE: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** Roles whose value may be heads × rows × cols, one matrix per head, as in tensor files: given
 * weights, and projections as TransformerLens keeps them (W_Q heads×d_model×d_head, W_O
 * heads×d_head×d_model). */
const STACKED_ROLES = new Set<Role>(['weights', 'WQ', 'WK', 'WV', 'WO']);

/** Whether a value of this role may be heads × rows × cols. */
export const mayStackHeads = ({ role, head }: RoleOf): boolean => STACKED_ROLES.has(role) && head === undefined;

/**
 * One problem named `name` from arrays read under roles; ranges point nowhere (there is no text).
 * A stacked read (heads × rows × cols) becomes one definition per head, `attn[0]`, `W_Q[1]`…;
 * but W_O's heads stacked are its rows in head order, the one W_O that Concat(heads)·W_O needs.
 */
export function problemOfArrays(name: string, arrays: readonly ({ name: string; read: ArrayRead } & RoleOf)[], labels: { tokens?: string[]; keyTokens?: string[] } = {}): Problem {
  const def = (name: string, role: RoleOf, value: MatrixDef['value'], boolean: boolean): MatrixDef => ({
    name,
    role: role.role,
    ...(role.head === undefined ? {} : { head: role.head }),
    value,
    boolean,
    nameRange: NOWHERE,
    range: NOWHERE,
    cellOffsets: new Uint32Array(0),
  });
  const matrices: MatrixDef[] = arrays.flatMap((array) => {
    const { matrix, heads, boolean } = array.read;
    if (!heads || array.role === 'WO') return [def(array.name, array, matrix, boolean)];
    const rows = matrix.rows / heads;
    return Array.from({ length: heads }, (_, h) =>
      def(`${array.name}[${h}]`, { role: array.role, head: h }, { rows, cols: matrix.cols, data: matrix.data.subarray(h * rows * matrix.cols, (h + 1) * rows * matrix.cols) }, boolean),
    );
  });
  return { index: 0, name, range: NOWHERE, options: defaultOptions(), matrices, ...labels };
}
