// Where each panel matrix lives (a MatrixKey): in the layer, in a head's gradients, or in the head
// itself — in a result, in its views, and in the panel data a page holds.
import type { AttentionResult, Matrix, Problem } from '../core/types';
import type { MatrixKey, MatrixView, PanelData, ResultView } from '../protocol';

export const LAYER_KEYS = ['input', 'concat', 'WO', 'layerOutput', 'residual'] as const;
export const GRADIENT_KEYS = ['dQ', 'dK', 'dV', 'dA', 'dS'] as const;
type LayerKey = (typeof LAYER_KEYS)[number];
type GradientKey = (typeof GRADIENT_KEYS)[number];
export const isLayerKey = (key: MatrixKey): key is LayerKey => (LAYER_KEYS as readonly MatrixKey[]).includes(key);
export const isGradientKey = (key: MatrixKey): key is GradientKey => (GRADIENT_KEYS as readonly MatrixKey[]).includes(key);

/** Where a panel matrix lives: in the layer, in a head's gradients, or in the head itself. */
function pick<T>(
  key: MatrixKey,
  layer: Partial<Record<LayerKey, T>>,
  head: Partial<Record<MatrixKey, T | null | number | object>> | undefined,
  gradients: Partial<Record<GradientKey, T>> | undefined,
): T | undefined {
  if (isLayerKey(key)) return layer[key];
  if (isGradientKey(key)) return gradients?.[key];
  return (head?.[key] as T | null | undefined) ?? undefined;
}

/** The full matrix behind a panel heatmap, or undefined when that result does not have it. */
export function matrixOf(result: AttentionResult, problem: Problem, head: number, key: MatrixKey): Matrix | undefined {
  const WO = problem.matrices.find((def) => def.role === 'WO')?.value;
  const layer = { input: result.input, concat: result.concat, WO, layerOutput: result.output, residual: result.residual };
  return pick<Matrix>(key, layer, result.heads[head] as never, result.heads[head]?.gradients);
}

/** The view of a panel matrix as sent to the webview (the standalone report's only copy). */
export function viewOfKey(data: PanelData, head: number, key: MatrixKey): MatrixView | undefined {
  return data.result && viewAt(data.result, head, key);
}

/** The view of a matrix in a result's views, if it has one. */
export function viewAt(result: ResultView, head: number, key: MatrixKey): MatrixView | undefined {
  return pick<MatrixView>(key, result, result.heads[head] as never, result.heads[head]?.gradients);
}
