// Which text a clicked heatmap cell comes from: the query's row of X (or Q), the key's row of X
// (or the context, K, V), the projection column that made a feature, the mask's own cell.
import * as vscode from 'vscode';
import type { MatrixDef, Problem, Role } from '../core/types';
import type { MatrixKey } from '../protocol';

export interface CellRef {
  key: MatrixKey;
  head: number;
  row: number;
  col: number;
}

const QUERY_ROWS = new Set<MatrixKey>(['Q', 'scores', 'scaled', 'masked', 'weights', 'givenWeights', 'output', 'dQ', 'dA', 'dS', 'concat', 'layerOutput', 'input', 'residual']);
const KEY_COLUMNS = new Set<MatrixKey>(['scores', 'scaled', 'masked', 'weights', 'givenWeights', 'dA', 'dS']);
const PROJECTION: Partial<Record<MatrixKey, Role>> = { Q: 'WQ', dQ: 'WQ', K: 'WK', dK: 'WK', V: 'WV', dV: 'WV' };

/** A place in the text to select: a notebook's matrices live in several cells' documents. */
export interface SourceRange {
  document: vscode.TextDocument;
  range: vscode.Range;
}

/** The document that holds a matrix's text, or undefined when it has none (a printed output, a
 * tensor file). */
export type DocumentOf = (def: MatrixDef) => vscode.TextDocument | undefined;

/** One entry's text: from its offset to the next separator. */
function entryRange(document: vscode.TextDocument, offset: number): vscode.Range {
  const start = document.positionAt(offset);
  return document.getWordRangeAtPosition(start, /[^\s,;&[\]()]+/) ?? new vscode.Range(start, start);
}

function cellRange(documentOf: DocumentOf, def: MatrixDef, row: number, col: number): SourceRange | undefined {
  const { rows, cols } = def.value;
  // Numbers from a tensor file have no entry in the text to select.
  const document = row < rows && col < cols && !def.source ? documentOf(def) : undefined;
  return document && { document, range: entryRange(document, def.cellOffsets[row * cols + col]) };
}

function rowRange(documentOf: DocumentOf, def: MatrixDef, row: number): SourceRange | undefined {
  const first = cellRange(documentOf, def, row, 0);
  const last = cellRange(documentOf, def, row, def.value.cols - 1);
  return first && last && { document: first.document, range: first.range.union(last.range) };
}

function find(problem: Problem, roles: Role[], head?: number): MatrixDef | undefined {
  for (const role of roles) {
    const defs = problem.matrices.filter((def) => def.role === role);
    const match = defs.find((def) => def.head === head) ?? defs.find((def) => def.head === undefined);
    if (match) return match;
  }
  return undefined;
}

/** Ranges to select for a clicked cell (several when both its query and its key have a row). */
export function sourceRanges(documentOf: DocumentOf, problem: Problem, cell: CellRef): SourceRange[] {
  const ranges: (SourceRange | undefined)[] = [];
  const { key, head, row, col } = cell;
  if (key === 'mask' || key === 'WO') {
    const def = find(problem, key === 'mask' ? ['mask'] : ['WO']);
    if (def) return [cellRange(documentOf, def, row, col)].filter((range): range is SourceRange => !!range);
  }
  const queries = find(problem, ['X', 'Q']);
  const keys = (role: 'K' | 'V') => find(problem, ['context', 'X', role]);
  if (QUERY_ROWS.has(key) && queries) ranges.push(rowRange(documentOf, queries, row));
  if ((key === 'K' || key === 'dK') && keys('K')) ranges.push(rowRange(documentOf, keys('K')!, row));
  if ((key === 'V' || key === 'dV') && keys('V')) ranges.push(rowRange(documentOf, keys('V')!, row));
  if (KEY_COLUMNS.has(key) && keys('K')) ranges.push(rowRange(documentOf, keys('K')!, col));
  const projectionRole = PROJECTION[key];
  const projection = projectionRole && find(problem, [projectionRole], head);
  if (projection) {
    // A whole W_Q is split column-wise across heads: head h's feature j is column h·width + j.
    const width = projection.head === undefined ? projection.value.cols / Math.max(1, problem.options.heads) : 0;
    const column = projection.head === undefined ? head * width + col : col;
    for (let r = 0; r < projection.value.rows; r++) ranges.push(cellRange(documentOf, projection, r, column));
  }
  return ranges.filter((range): range is SourceRange => !!range);
}
