// "Export matrix" of the panel: one matrix as CSV or JSON with its row and column labels, in the
// extension host (the full matrix) and in a standalone report (the matrix as embedded). The
// number formats are the core's, shared with the CLI and the Export command.
import { matrixRows, matrixToCsv } from '../core/format';
import type { Matrix } from '../core/types';
import type { MatrixKey } from '../protocol';

export interface AxisLabels {
  rows: string[];
  cols: string[];
}

const KEY_ROWS = new Set<MatrixKey>(['K', 'V', 'dK', 'dV']);
const ATTENTION_SHAPED = new Set<MatrixKey>(['scores', 'scaled', 'mask', 'masked', 'weights', 'givenWeights', 'dA', 'dS']);

/** Labels of a panel matrix: tokens (else q1…/k1…) along tokens, d1… along feature dimensions. */
export function labelsOf(key: MatrixKey, rows: number, cols: number, tokens?: string[], keyTokens?: string[]): AxisLabels {
  const named = (count: number, prefix: string, names?: string[]) =>
    Array.from({ length: count }, (_, i) => names?.[i] ?? `${prefix}${i + 1}`);
  const keyNames = keyTokens ?? tokens;
  return {
    rows: key === 'WO' ? named(rows, 'd') : KEY_ROWS.has(key) ? named(rows, 'k', keyNames) : named(rows, 'q', tokens),
    cols: ATTENTION_SHAPED.has(key) ? named(cols, 'k', keyNames) : named(cols, 'd'),
  };
}

export function matrixExportText(format: 'csv' | 'json', name: string, matrix: Matrix, labels: AxisLabels): string {
  if (format === 'csv') return matrixToCsv(matrix, labels);
  const json = { name, rows: matrix.rows, cols: matrix.cols, rowLabels: labels.rows, colLabels: labels.cols, data: matrixRows(matrix) };
  return `${JSON.stringify(json, null, 1)}\n`;
}
