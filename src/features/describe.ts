// Words for matrices, roles and runs, shared by CodeLens, hovers and the status bar so every
// surface names things the same way.
import type { AttentionResult, MatrixDef, Problem, Role } from '../core/types';
import type { ProblemRun } from '../host/results';

export const ROLE_NAMES: Record<Role, string> = {
  X: 'input embeddings',
  context: 'keys/values source (cross-attention)',
  PE: 'positional encoding',
  WQ: 'query projection',
  WK: 'key projection',
  WV: 'value projection',
  WO: 'output projection',
  Q: 'queries',
  K: 'keys',
  V: 'values',
  mask: 'attention mask',
  padding: 'key padding mask',
  Wa: 'Luong "general" score matrix',
  W1: 'Bahdanau query-side matrix',
  W2: 'Bahdanau key-side matrix',
  va: 'Bahdanau output vector',
  dO: 'upstream gradient of the output',
  alibiSlopes: 'ALiBi slopes (one per head)',
  segments: 'document ids (one per token)',
  weights: 'attention weights as given (shown beside the computed ones)',
};

/** How a matrix enters the computation. */
export function roleFormula(def: MatrixDef, problem: Problem): string {
  const hasContext = problem.matrices.some((m) => m.role === 'context');
  const source = hasContext ? 'Y' : 'X';
  switch (def.role) {
    case 'X':
      return hasContext ? 'Q = X · W_Q' : 'Q = X · W_Q, K = X · W_K, V = X · W_V';
    case 'context':
      return 'K = Y · W_K, V = Y · W_V';
    case 'PE':
      return 'X ← X + PE';
    case 'WQ':
      return 'Q = X · W_Q';
    case 'WK':
      return `K = ${source} · W_K`;
    case 'WV':
      return `V = ${source} · W_V`;
    case 'WO':
      return 'output = Concat(head₁ … head_h) · W_O';
    case 'Q':
    case 'K':
      return 'S = Q · Kᵀ';
    case 'V':
      return 'O = A · V';
    case 'mask':
      return def.boolean ? 'false → −∞ added to S · scale before softmax' : 'S · scale + M before softmax';
    case 'padding':
      return 'true → that key is ignored by every query';
    case 'Wa':
      return 'score(q, k) = q · W_a · kᵀ';
    case 'W1':
    case 'W2':
    case 'va':
      return 'score(q, k) = v_aᵀ · tanh(W₁ q + W₂ k)';
    case 'dO':
      return 'backward pass starts from dO';
    case 'alibiSlopes':
      return 'head h adds −m_h · |i − j| to its scores (with `alibi`)';
    case 'segments':
      return 'query i sees key j only when their ids are equal';
    case 'weights':
      return 'compared with A = softmax(S\'\') of each head: max |given − computed|';
    default:
      return 'not used by attention';
  }
}

/** `W_Q · 4×2`, `X · 3 tokens × 4`, `W_Q1 · 4×2 · head 1`. */
export function matrixTitle(def: MatrixDef): string {
  const { rows, cols } = def.value;
  const shape = def.role === 'X' || def.role === 'context' ? `${rows} token${rows === 1 ? '' : 's'} × ${cols}` : `${rows}×${cols}`;
  const head = def.head !== undefined ? ` · head ${def.head + 1}` : '';
  const unknown = def.role === undefined ? ' · not used' : '';
  const printed = def.range.start.output !== undefined ? ' · printed output' : '';
  return `${def.name} · ${shape}${head}${printed}${unknown}`;
}

/** `2 heads · causal · rows sum to 1 ✓ · 3 ms`, or the reason a run failed. */
export function runSummary(run: ProblemRun): string {
  if (!run.result) return `⚠ ${run.error ?? 'not run'}`;
  return resultSummary(run.problem, run.result);
}

function resultSummary(problem: Problem, result: AttentionResult): string {
  const heads = result.heads.length;
  const parts = [`${heads} head${heads === 1 ? '' : 's'}`];
  const { causal } = problem.options;
  if (causal) parts.push(causal === 'bottom-right' ? 'causal (bottom-right)' : 'causal');
  if (problem.matrices.some((m) => m.role === 'mask')) parts.push('masked');
  if (problem.matrices.some((m) => m.role === 'padding')) parts.push('padding');
  parts.push(
    result.checks.rowsSumToOne
      ? 'rows sum to 1 ✓'
      : `rows sum to 1 ✗ (off by ${result.checks.rowSumsMaxError.toExponential(1)})`,
  );
  if (result.warnings.length > 0) parts.push(`${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'}`);
  parts.push(formatMs(result.elapsedMs));
  return parts.join(' · ');
}

export function formatMs(ms: number): string {
  return ms < 1 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
