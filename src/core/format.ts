// Results → what people take away: the CLI/export JSON (issue 2's shape), CSV of one matrix,
// and a readable step-by-step text report. Pure: the CLI and the extension's export share it.
import { maskSavings } from './engine/cost';
import { scoreScale } from './engine/scores';
import { comparePositions, positionLabel } from './location';
import type { AttentionOptions, AttentionResult, Checks, Diagnostic, Matrix, OutputOnlyResult, Problem, Severity } from './types';

/** One problem of a file: what was read, what its spec check said, and the run, if it ran. */
export interface ProblemOutcome {
  problem: Problem;
  diagnostics: Diagnostic[];
  /** The options the run used (the spec's: heads inferred from per-head matrices, …). */
  options?: AttentionOptions;
  result?: AttentionResult;
  /** Instead of `result`: an output-only run (no per-head steps, no checks). */
  outputOnly?: OutputOnlyResult;
}

export type JsonNumber = number | 'Infinity' | '-Infinity' | 'NaN';
export type JsonMatrix = JsonNumber[][];

export interface JsonDiagnostic {
  /** In a notebook: the 1-based cell, and `output` (1-based) when the line is in one of its outputs. */
  cell?: number;
  output?: number;
  line: number; // 1-based
  column: number; // 1-based
  endLine: number;
  endColumn: number;
  severity: Severity;
  message: string;
  code: string;
  suggestion?: string;
}

export interface JsonHead {
  Q: JsonMatrix;
  K: JsonMatrix;
  V: JsonMatrix;
  scores: JsonMatrix;
  scaled: JsonMatrix;
  mask: JsonMatrix | null;
  weights: JsonMatrix;
  output: JsonMatrix;
  kvHead: number;
  gradients?: Record<'dQ' | 'dK' | 'dV' | 'dA' | 'dS', JsonMatrix>;
  /** Weights given for this head (role `weights`) and max |given − computed| (null: NaN). */
  givenWeights?: JsonMatrix;
  givenMaxDifference?: number | null;
}

export interface JsonProblem {
  index: number; // 1-based, as `--problem N`
  name: string | null;
  line: number; // 1-based line where the problem starts
  cell?: number; // in a notebook: the 1-based cell of that line
  options: Problem['options'];
  tokens: string[] | null;
  keyTokens: string[] | null;
  heads: JsonHead[];
  concat: JsonMatrix | null;
  output: JsonMatrix | null;
  residual: JsonMatrix | null;
  /** Only weights were given: each head's `weights` (and `givenWeights`) are those; nothing computed. */
  givenOnly?: boolean;
  gradients: Record<string, JsonMatrix> | null;
  checks: Checks | null;
  warnings: string[];
  /** Computed output-only (`--output-only`): `heads` is empty and `checks` null. */
  outputOnly: boolean;
}

export interface JsonReport {
  problems: JsonProblem[];
  diagnostics: JsonDiagnostic[];
}

export function jsonNumber(x: number): JsonNumber {
  if (Number.isFinite(x)) return x;
  return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
}

/** A matrix as an array of rows, non-finite entries as strings (JSON has no Infinity). */
export function matrixRows(m: Matrix): JsonMatrix {
  const rows: JsonMatrix = [];
  for (let i = 0; i < m.rows; i++) {
    const row: JsonNumber[] = [];
    for (let j = 0; j < m.cols; j++) row.push(jsonNumber(m.data[i * m.cols + j]));
    rows.push(row);
  }
  return rows;
}

/** A notebook position's cell and output, 1-based, as JSON fields (none in a text file). */
function jsonCell(position: Diagnostic['range']['start']): { cell?: number; output?: number } {
  return {
    ...(position.cell !== undefined ? { cell: position.cell + 1 } : {}),
    ...(position.output !== undefined ? { output: position.output + 1 } : {}),
  };
}

export function jsonDiagnostic(d: Diagnostic): JsonDiagnostic {
  return {
    ...jsonCell(d.range.start),
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    endLine: d.range.end.line + 1,
    endColumn: d.range.end.character + 1,
    severity: d.severity,
    message: d.message,
    code: d.code,
    ...(d.suggestion ? { suggestion: d.suggestion } : {}),
  };
}

function byPosition(a: Diagnostic, b: Diagnostic): number {
  return comparePositions(a.range.start, b.range.start);
}

/** Every diagnostic of a read and its problems' spec checks, in file order. */
export function allDiagnostics(readDiagnostics: Diagnostic[], outcomes: ProblemOutcome[]): Diagnostic[] {
  return [...readDiagnostics, ...outcomes.flatMap((outcome) => outcome.diagnostics)].sort(byPosition);
}

export function toJsonReport(readDiagnostics: Diagnostic[], outcomes: ProblemOutcome[]): JsonReport {
  return {
    problems: outcomes.map(jsonProblem),
    diagnostics: allDiagnostics(readDiagnostics, outcomes).map(jsonDiagnostic),
  };
}

function jsonProblem({ problem, options, result, outputOnly }: ProblemOutcome): JsonProblem {
  const layer = result ?? outputOnly;
  const gradients = result?.gradients;
  const wholeGradients: Record<string, JsonMatrix> = {};
  for (const key of ['dX', 'dWQ', 'dWK', 'dWV', 'dWO'] as const) {
    const m = gradients?.[key];
    if (m) wholeGradients[key] = matrixRows(m);
  }
  return {
    index: problem.index + 1,
    name: problem.name ?? null,
    line: problem.range.start.line + 1,
    ...(problem.range.start.cell !== undefined ? { cell: problem.range.start.cell + 1 } : {}),
    options: options ?? problem.options,
    tokens: problem.tokens ?? null,
    keyTokens: problem.keyTokens ?? null,
    heads: (result?.heads ?? []).map((head) => ({
      Q: matrixRows(head.Q),
      K: matrixRows(head.K),
      V: matrixRows(head.V),
      scores: matrixRows(head.scores),
      scaled: matrixRows(head.scaled),
      mask: head.mask ? matrixRows(head.mask) : null,
      weights: matrixRows(head.weights),
      output: matrixRows(head.output),
      kvHead: head.kvHead,
      ...(head.gradients
        ? {
            gradients: {
              dQ: matrixRows(head.gradients.dQ),
              dK: matrixRows(head.gradients.dK),
              dV: matrixRows(head.gradients.dV),
              dA: matrixRows(head.gradients.dA),
              dS: matrixRows(head.gradients.dS),
            },
          }
        : {}),
      ...(head.givenWeights ? { givenWeights: matrixRows(head.givenWeights), givenMaxDifference: Number.isNaN(head.givenMaxDifference) ? null : (head.givenMaxDifference ?? null) } : {}),
    })),
    ...(result?.givenOnly ? { givenOnly: true } : {}),
    concat: layer ? matrixRows(layer.concat) : null,
    output: layer ? matrixRows(layer.output) : null,
    residual: layer?.residual ? matrixRows(layer.residual) : null,
    gradients: gradients ? wholeGradients : null,
    checks: result?.checks ?? null,
    warnings: layer?.warnings ?? [],
    outputOnly: outputOnly !== undefined,
  };
}

function csvCell(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One matrix as CSV, every number at full precision (`String(x)`, so -Infinity/NaN stay
 * readable by numpy and pandas). With labels, a header row of column labels and a first column
 * of row labels.
 */
export function matrixToCsv(m: Matrix, labels?: { rows?: string[]; cols?: string[] }): string {
  const lines: string[] = [];
  if (labels?.cols) lines.push([...(labels.rows ? [''] : []), ...labels.cols].map(csvCell).join(','));
  for (let i = 0; i < m.rows; i++) {
    const cells: string[] = labels?.rows ? [csvCell(labels.rows[i] ?? String(i + 1))] : [];
    for (let j = 0; j < m.cols; j++) cells.push(String(m.data[i * m.cols + j]));
    lines.push(cells.join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Largest rows/columns a text report prints of one matrix; the rest is elided with a note. */
const TEXT_LIMIT = 12;

function formatEntry(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '∞';
  if (x === -Infinity) return '-∞';
  if (x !== 0 && (Math.abs(x) >= 1e6 || Math.abs(x) < 1e-4)) return x.toExponential(3);
  return x.toFixed(4);
}

/** A matrix as aligned text, rows labelled by tokens when given. */
export function matrixToText(m: Matrix, indent = '    ', rowLabels?: string[]): string {
  const rows = Math.min(m.rows, TEXT_LIMIT);
  const cols = Math.min(m.cols, TEXT_LIMIT);
  const cells: string[][] = [];
  for (let i = 0; i < rows; i++) {
    const row: string[] = [];
    for (let j = 0; j < cols; j++) row.push(formatEntry(m.data[i * m.cols + j]));
    if (cols < m.cols) row.push('…');
    cells.push(row);
  }
  const width = Math.max(1, ...cells.flat().map((cell) => cell.length));
  const labels = rowLabels?.slice(0, rows).map((label) => label.slice(0, 12));
  const labelWidth = labels ? Math.max(...labels.map((label) => label.length)) : 0;
  const lines = cells.map((row, i) => {
    const label = labels ? `${(labels[i] ?? '').padEnd(labelWidth)}  ` : '';
    return `${indent}${label}[ ${row.map((cell) => (cell === '…' ? cell : cell.padStart(width))).join('  ')} ]`;
  });
  if (rows < m.rows) lines.push(`${indent}… ${m.rows - rows} more rows (${m.rows}×${m.cols} in all)`);
  return lines.join('\n');
}

function describeOptions(o: AttentionOptions): string {
  const parts = [`heads=${o.heads}`];
  if (o.kvHeads !== undefined) parts.push(`kv_heads=${o.kvHeads}`);
  parts.push(`score=${o.score}`);
  if (o.scale !== undefined) parts.push(`scale=${o.scale}`);
  if (o.causal) parts.push(`causal=${o.causal}`);
  if (o.dtype !== 'float64') parts.push(`dtype=${o.dtype}`);
  if (o.sinusoidalPE) parts.push('pe=sinusoidal');
  if (o.gradients) parts.push('grad');
  if (o.residual) parts.push('residual');
  if (o.rope !== undefined) parts.push(`rope=${o.rope} rope_layout=${o.ropeLayout ?? 'half'}`);
  for (const key of ['temperature', 'softcap', 'window', 'prefix', 'sinks'] as const) if (o[key] !== undefined) parts.push(`${key}=${o[key]}`);
  if (o.alibi) parts.push('alibi');
  if (o.decode) parts.push('decode');
  return parts.join(' ');
}

/** Step 3's label: the scale, and the temperature and softcap that follow it. */
function scaledLabel(options: AttentionOptions, scale: number, width: number): string {
  const root = options.scale === undefined && options.score === 'scaled_dot' ? ` (1/√${width})` : '';
  const temperature = options.temperature !== undefined ? ` / ${formatEntry(options.temperature)} (temperature)` : '';
  const cap = options.softcap !== undefined ? `, then ${formatEntry(options.softcap)}·tanh(s/${formatEntry(options.softcap)}) (softcap)` : '';
  return `scaled S × ${formatEntry(scale)}${root}${temperature}${cap}`;
}

/** Where a diagnostic points, as `file:line:column`, or in a notebook `file: cell 3, line 2, column 5`. */
export function diagnosticLine(file: string, d: Diagnostic): string {
  const suggestion = d.suggestion ? ` (${d.suggestion})` : '';
  const { start } = d.range;
  const at = start.cell === undefined ? `${file}:${start.line + 1}:${start.character + 1}` : `${file}: ${positionLabel(start)}, column ${start.character + 1}`;
  return `${at}: ${d.severity}: ${d.message}${suggestion}`;
}

/** The readable step-by-step report of one problem's run. */
export function problemToText({ problem, options = problem.options, result, outputOnly, diagnostics }: ProblemOutcome): string {
  const title = `Problem ${problem.index + 1}${problem.name ? ` "${problem.name}"` : ''} (${positionLabel(problem.range.start)}) — ${describeOptions(options)}`;
  const out: string[] = [title, '='.repeat(Math.min(title.length, 100))];
  if (outputOnly) return [...out, ...outputOnlyText(outputOnly, options, problem.tokens)].join('\n');
  if (!result) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    out.push(`  Not run: ${errors.length} ${errors.length === 1 ? 'error' : 'errors'} (see below).`);
    return out.join('\n');
  }
  // A decode step's one row is the last query's.
  const tokens = result.decode ? problem.tokens?.slice(-1) : problem.tokens;
  const keyTokens = problem.keyTokens ?? (result.heads[0]?.K.rows === problem.tokens?.length ? problem.tokens : undefined);
  if (options.rope !== undefined) out.push(`  RoPE: Q and K turned by position·${options.rope}^(−2k/d), pairs ${options.ropeLayout === 'interleaved' ? '(x_2k, x_2k+1) (interleaved)' : '(x_k, x_k+d/2) (rotate half)'}; scores use the turned Q and K`);
  if (result.decode) out.push(`  decode: query ${result.decode.row + 1} alone against every key (one KV-cache step); the full run's row ${result.decode.row + 1} differs by at most ${result.decode.maxDifference.toExponential(1)}`);
  if (tokens) out.push(`  tokens: ${tokens.join(' | ')}`);
  if (result.input) out.push(`  input X${problem.matrices.some((m) => m.role === 'PE') || options.sinusoidalPE ? ' + PE' : ''} (${result.input.rows}×${result.input.cols})`, matrixToText(result.input, '    ', tokens));
  const grouped = result.heads.some((head, h) => head.kvHead !== h);
  if (result.givenOnly) {
    out.push('  Only attention weights are given: shown as they are, nothing computed');
    result.heads.forEach((head, h) => out.push('', `  ${result.heads.length > 1 ? `Head ${h + 1}: ` : ''}weights as given`, matrixToText(head.weights, '    ', tokens)));
  }
  if (!result.givenOnly) result.heads.forEach((head, h) => {
    const label = result.heads.length > 1 ? `Head ${h + 1}${grouped ? ` (uses KV head ${head.kvHead + 1})` : ''}` : 'Attention';
    const scale = scoreScale({ options }, head.Q.cols);
    const dot = options.score === 'scaled_dot' || options.score === 'dot';
    out.push('', `  ${label}`);
    out.push(`  1. Q (${head.Q.rows}×${head.Q.cols}), K (${head.K.rows}×${head.K.cols}), V (${head.V.rows}×${head.V.cols})`);
    out.push('    Q', matrixToText(head.Q, '      ', tokens), '    K', matrixToText(head.K, '      ', keyTokens), '    V', matrixToText(head.V, '      ', keyTokens));
    out.push(`  2. scores S = ${dot ? 'Q·Kᵀ' : options.score}`, matrixToText(head.scores, '    ', tokens));
    out.push(`  3. ${scaledLabel(options, scale, head.Q.cols)}`, matrixToText(head.scaled, '    ', tokens));
    if (head.mask) out.push(`  4. + ${options.alibi ? 'ALiBi bias −m·|i − j| + ' : ''}mask (0 = may attend, -∞ = blocked)`, matrixToText(head.mask, '    ', tokens));
    out.push(`  ${head.mask ? 5 : 4}. weights A = softmax(rows) — each row sums to 1`, matrixToText(head.weights, '    ', tokens));
    out.push(`  ${head.mask ? 6 : 5}. output A·V`, matrixToText(head.output, '    ', tokens));
    if (head.givenWeights) {
      out.push(`  weights as given — max |given − computed| = ${(head.givenMaxDifference ?? NaN).toExponential(2)}`, matrixToText(head.givenWeights, '    ', tokens));
    }
  });
  if (result.heads.length > 1 && !result.givenOnly) out.push('', `  Concat(heads) (${result.concat.rows}×${result.concat.cols})`, matrixToText(result.concat, '    ', tokens));
  if (result.output !== result.concat) out.push('', `  Output = Concat · W_O (${result.output.rows}×${result.output.cols})`, matrixToText(result.output, '    ', tokens));
  if (result.residual) out.push('', "  Residual E' = E + ΔE", matrixToText(result.residual, '    ', tokens));
  if (result.gradients) {
    out.push('', '  Gradients (upstream dO)');
    for (const key of ['dX', 'dWQ', 'dWK', 'dWV', 'dWO'] as const) {
      const m = result.gradients[key];
      if (m) out.push(`    ${key}`, matrixToText(m, '      '));
    }
  }
  const c = result.checks;
  const mark = (ok: boolean): string => (ok ? '✓' : '✗');
  out.push('', '  Checks');
  out.push(`    ${mark(c.rowsSumToOne)} rows of A sum to 1 (largest error ${c.rowSumsMaxError.toExponential(1)})`);
  out.push(`    ${mark(c.weightsInBounds)} 0 ≤ A ≤ 1`);
  if (c.permutationEquivariant !== undefined) {
    const rows = c.permutationRowsChecked !== undefined ? `, ${c.permutationRowsChecked} output row${c.permutationRowsChecked === 1 ? '' : 's'} compared` : '';
    out.push(`    ${mark(c.permutationEquivariant)} permutation equivariant (largest error ${(c.permutationMaxError ?? 0).toExponential(1)}${rows})`);
  }
  out.push(`    cost: ${c.flops.toLocaleString('en-US')} FLOPs, ${c.attentionBytes.toLocaleString('en-US')} bytes of attention matrices (${result.dtype})`);
  const first = result.heads[0];
  if (first?.mask) {
    const m = maskSavings(first.mask, { heads: result.heads.length, dK: first.Q.cols, dV: first.V.cols });
    out.push(`    mask: blocks ${(100 * m.blockedShare).toFixed(1)}% of the Lq×Lk products (${m.flopsSaved.toLocaleString('en-US')} FLOPs a kernel could skip); ${(100 * m.skippedBlocksShare).toFixed(1)}% of ${m.blockSize}×${m.blockSize} tiles entirely`);
  }
  for (const warning of result.warnings) out.push(`  warning: ${warning}`);
  return out.join('\n');
}

function outputOnlyText(run: OutputOnlyResult, options: AttentionOptions, tokens?: string[]): string[] {
  const out = ['  Output only: online softmax over blocks of keys, no n×n matrix kept (scores and weights are not shown).'];
  if (options.heads > 1) out.push('', `  Concat(heads) (${run.concat.rows}×${run.concat.cols})`, matrixToText(run.concat, '    ', tokens));
  if (run.output !== run.concat) out.push('', `  Output = Concat · W_O (${run.output.rows}×${run.output.cols})`, matrixToText(run.output, '    ', tokens));
  else if (options.heads === 1) out.push('', `  Output A·V (${run.output.rows}×${run.output.cols})`, matrixToText(run.output, '    ', tokens));
  if (run.residual) out.push('', "  Residual E' = E + ΔE", matrixToText(run.residual, '    ', tokens));
  for (const warning of run.warnings) out.push(`  warning: ${warning}`);
  return out;
}

/** The whole text report: every problem, then every diagnostic. */
export function toTextReport(file: string, readDiagnostics: Diagnostic[], outcomes: ProblemOutcome[]): string {
  const parts = outcomes.map(problemToText);
  const diagnostics = allDiagnostics(readDiagnostics, outcomes);
  if (diagnostics.length > 0) parts.push(['Diagnostics', ...diagnostics.map((d) => `  ${diagnosticLine(file, d)}`)].join('\n'));
  return `${parts.join('\n\n')}\n`;
}
