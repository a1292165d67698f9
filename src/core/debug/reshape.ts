// Flat arrays read from a paused program, given their matrix shape. JavaScript has no 2-D typed
// array, so JS code keeps a weight matrix as one flat row-major buffer (`new Float64Array(16)`);
// read as it is, that is a 1×16 row. When the other arrays of the problem fix one of its
// dimensions — a projection's rows are X's columns, X's columns are a projection's rows, W_O's
// rows are the heads' value widths together — it is read row-major in that shape, and the note
// says so. Otherwise the shapes its length allows are offered to the user (shapeChoices).
import { roleLabel } from '../parse/names';
import type { Matrix, Role } from '../types';

export interface ShapedArray {
  name: string;
  role: Role;
  head?: number;
  matrix: Matrix;
  /** The program holds it flat (one axis): its rows×cols are the reader's to choose. */
  flat: boolean;
}

/** Roles whose values are matrices of two real dimensions; other flat values (a padding row, ALiBi slopes) stay rows. */
const MATRIX_ROLES = new Set<Role>(['X', 'context', 'PE', 'WQ', 'WK', 'WV', 'WO', 'Q', 'K', 'V']);

/** A dimension another array fixes: rows or columns, how many, and from what (for the note). */
interface Fixed {
  axis: 'rows' | 'cols';
  size: number;
  from: string;
}

export interface Reshaped {
  arrays: ShapedArray[];
  /** One per array read in another shape: "W_V: 16 values read as 4×4 (row-major), from X's 4 columns". */
  notes: string[];
  /** Flat arrays that nothing fixes (their length has more than one shape): the user picks. */
  undecided: ShapedArray[];
}

/** Gives the flat arrays that the others fix a shape, as far as they fix one another. */
export function reshapeFlat(arrays: readonly ShapedArray[]): Reshaped {
  const done = arrays.map((array) => ({ ...array, decided: !array.flat || !MATRIX_ROLES.has(array.role) }));
  const notes: string[] = [];
  for (let progress = true; progress; ) {
    progress = false;
    for (const array of done) {
      if (array.decided) continue;
      const length = array.matrix.data.length;
      const fixed = fixedDimensions(array, done.filter((other) => other.decided)).find(({ size }) => size > 0 && length % size === 0);
      if (!fixed) continue;
      const rows = fixed.axis === 'rows' ? fixed.size : length / fixed.size;
      array.matrix = { rows, cols: length / rows, data: array.matrix.data };
      array.flat = false;
      array.decided = true;
      progress = true;
      if (rows !== 1) notes.push(`${array.name}: ${length} values read as ${rows}×${length / rows} (row-major), from ${fixed.from}`);
    }
  }
  const strip = ({ decided: _, ...array }: ShapedArray & { decided: boolean }): ShapedArray => array;
  return { arrays: done.map(strip), notes, undecided: done.filter((array) => !array.decided).map(strip) };
}

/** What the decided arrays say of this array's shape, the most telling first. */
function fixedDimensions(array: ShapedArray, decided: readonly ShapedArray[]): Fixed[] {
  const find = (...roles: Role[]) => decided.filter((other) => roles.includes(other.role));
  const rowsOf = (others: ShapedArray[]): Fixed[] => others.map((other) => ({ axis: 'rows', size: other.matrix.rows, from: `${other.name}'s ${other.matrix.rows} rows` }));
  const colsOf = (others: ShapedArray[]): Fixed[] => others.map((other) => ({ axis: 'cols', size: other.matrix.cols, from: `${other.name}'s ${other.matrix.cols} columns` }));
  const asRows = (fixes: Fixed[]): Fixed[] => fixes.map((fix) => ({ ...fix, axis: 'rows' }));
  const asCols = (fixes: Fixed[]): Fixed[] => fixes.map((fix) => ({ ...fix, axis: 'cols' }));
  switch (array.role) {
    case 'WQ':
      // Projections take d_model inputs: X's columns, or another projection's rows.
      return [...asRows(colsOf(find('X'))), ...rowsOf(find('WQ', 'WK', 'WV'))];
    case 'WK':
    case 'WV':
      return [...asRows(colsOf(find('context', 'X'))), ...rowsOf(find('WK', 'WV', 'WQ'))];
    case 'WO': {
      // W_O takes the heads' outputs side by side: the value projections' columns together.
      const values = find('WV');
      const width = values.reduce((sum, other) => sum + other.matrix.cols, 0);
      const fixes: Fixed[] = width > 0 ? [{ axis: 'rows', size: width, from: values.length === 1 ? `${values[0].name}'s ${width} columns` : `the ${values.length} heads' ${roleLabel('WV')} columns (${width})` }] : [];
      return fixes;
    }
    case 'X':
    case 'PE':
      return [...asCols(rowsOf(find('WQ', 'WK', 'WV'))), ...colsOf(find('X', 'PE'))];
    case 'context':
      return asCols(rowsOf(find('WK', 'WV')));
    case 'Q':
      return colsOf(find('K'));
    case 'K':
      return [...colsOf(find('Q')), ...rowsOf(find('V'))];
    case 'V':
      return rowsOf(find('K'));
    default:
      return [];
  }
}

/** The rows×cols a flat array of `length` values may be read as, for the user to pick from. */
export function shapeChoices(length: number): { rows: number; cols: number }[] {
  const choices: { rows: number; cols: number }[] = [];
  for (let rows = 1; rows <= length; rows++) if (length % rows === 0) choices.push({ rows, cols: length / rows });
  return choices;
}
