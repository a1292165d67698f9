// Inline heatmaps: after a run, each row of X (or Q) gets a strip of small coloured cells after
// its line — that query's attention weights over the keys, one strip per head — with a hover
// giving the numbers. Toggled by `Attention: Toggle Inline Heatmaps` and the setting
// `attentionLens.inlineHeatmap`.
import * as vscode from 'vscode';
import type { AttentionResult, MatrixDef, Problem } from '../core/types';
import type { DocumentRun, Results } from '../host/results';

export const INLINE_HEATMAP_SETTING = 'inlineHeatmap';
export const TOGGLE_INLINE_HEATMAP = 'attentionLens.toggleInlineHeatmap';

/** Strips wider than this many keys, or more heads than this, would not fit after a line. */
const MAX_KEYS = 64;
const MAX_HEADS = 4;

/** Viridis at 9 stops: perceptually even, readable on light and dark editor backgrounds. */
const VIRIDIS = ['#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c', '#28ae80', '#5ec962', '#addc30', '#fde725'];

function colorOf(weight: number): string {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(weight) ? weight : 0));
  return VIRIDIS[Math.round(clamped * (VIRIDIS.length - 1))];
}

function enabled(): boolean {
  return vscode.workspace.getConfiguration('attentionLens').get<boolean>(INLINE_HEATMAP_SETTING, true);
}

/** Where each row's last entry starts: what places a row's strip. */
const rowEnds = (def: MatrixDef) => Array.from({ length: def.value.rows }, (_, r) => def.cellOffsets[r * def.value.cols + def.value.cols - 1]);

/** Same shape and rows ending where they did (one comparison per row: a large X has millions of
 * entries, and this runs on the extension host after every read). */
function sameRows(a: MatrixDef, b: MatrixDef): boolean {
  if (a.value.rows !== b.value.rows || a.value.cols !== b.value.cols) return false;
  const ends = rowEnds(b);
  return rowEnds(a).every((end, r) => end === ends[r]);
}

/** The rows' source: X, else Q — only while its rows are where they were when the result was computed. */
function rowSource(current: Problem, ran: Problem): MatrixDef | undefined {
  for (const role of ['X', 'Q'] as const) {
    const now = current.matrices.find((def) => def.role === role && def.head === undefined);
    const then = ran.matrices.find((def) => def.role === role && def.head === undefined);
    if (now && then && sameRows(now, then)) return now;
    if (now || then) return undefined;
  }
  return undefined;
}

function hoverOf(problem: Problem, result: AttentionResult, row: number): vscode.MarkdownString {
  const keyNames = problem.keyTokens ?? problem.tokens;
  const keyName = (j: number) => keyNames?.[j] ?? `k${j + 1}`;
  const query = problem.tokens?.[row] !== undefined ? `query ${row + 1} (${problem.tokens[row]})` : `query ${row + 1}`;
  const lines = [`**Attention weights of ${query}**`, ''];
  const keys = result.heads[0]?.weights.cols ?? 0;
  lines.push(`| head | ${Array.from({ length: keys }, (_, j) => keyName(j).replace(/\|/g, '\\|')).join(' | ')} |`);
  lines.push(`|---|${'---:|'.repeat(keys)}`);
  result.heads.forEach((head, h) => {
    const weights = Array.from({ length: keys }, (_, j) => head.weights.data[row * keys + j].toFixed(4));
    lines.push(`| ${h + 1} | ${weights.join(' | ')} |`);
  });
  return new vscode.MarkdownString(lines.join('\n'));
}

/** Pixels of one cell of the strip, and of the gap between heads. */
const CELL = 9;
const HEAD_GAP = 6;

/**
 * One row's strip as an SVG image: a cell per key and head. One image per line, because VS Code
 * merges identical decorations at one position (equal weights would lose their cells); the thin
 * grey outline keeps the darkest cells visible on dark editor backgrounds.
 */
function stripSvg(result: AttentionResult, row: number): string {
  const heads = result.heads.slice(0, MAX_HEADS);
  const keys = heads[0]?.weights.cols ?? 0;
  const width = heads.length * keys * CELL + (heads.length - 1) * HEAD_GAP;
  const cells = heads.flatMap((head, h) =>
    Array.from({ length: keys }, (_, j) => {
      const x = h * (keys * CELL + HEAD_GAP) + j * CELL;
      return `<rect x="${x + 0.5}" y="0.5" width="${CELL - 1}" height="${CELL - 1}" fill="${colorOf(head.weights.data[row * keys + j])}" stroke="#8888" stroke-width="1"/>`;
    }),
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${CELL}" viewBox="0 0 ${width} ${CELL}">${cells.join('')}</svg>`;
}

function inlineDecorations(document: vscode.TextDocument, run: DocumentRun): vscode.DecorationOptions[] {
  const decorations: vscode.DecorationOptions[] = [];
  for (const problem of run.parse.problems) {
    const problemRun = run.runs[problem.index];
    const result = problemRun?.result;
    const source = result && rowSource(problem, problemRun.problem);
    if (!result || !source || source.cellOffsets.length === 0) continue;
    const keys = result.heads[0]?.weights.cols ?? 0;
    if (keys === 0 || keys > MAX_KEYS) continue;
    const rowLines = Array.from({ length: source.value.rows }, (_, r) =>
      document.positionAt(source.cellOffsets[r * source.value.cols + source.value.cols - 1]).line);
    // A strip belongs after its row's line; rows sharing a line would be ambiguous.
    if (new Set(rowLines).size !== rowLines.length) continue;
    rowLines.forEach((line, row) => {
      if (row >= (result.heads[0]?.weights.rows ?? 0)) return;
      const end = document.lineAt(line).range.end;
      const svg = Buffer.from(stripSvg(result, row)).toString('base64');
      decorations.push({
        range: new vscode.Range(end, end),
        hoverMessage: hoverOf(problem, result, row),
        renderOptions: { after: { contentIconPath: vscode.Uri.parse(`data:image/svg+xml;base64,${svg}`), margin: '0 0 0 2em' } },
      });
    });
  }
  return decorations;
}

export function registerInlineHeatmap(context: vscode.ExtensionContext, results: Results): void {
  const decorationType = vscode.window.createTextEditorDecorationType({});
  const refresh = (editor: vscode.TextEditor) => {
    const run = results.get(editor.document.uri.toString());
    const current = enabled() && run && run.version === editor.document.version;
    editor.setDecorations(decorationType, current ? inlineDecorations(editor.document, run) : []);
  };
  const refreshAll = () => vscode.window.visibleTextEditors.forEach(refresh);
  context.subscriptions.push(
    decorationType,
    results.onDidChange(({ uri }) => vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri).forEach(refresh)),
    vscode.window.onDidChangeVisibleTextEditors(refreshAll),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`attentionLens.${INLINE_HEATMAP_SETTING}`)) refreshAll();
    }),
    vscode.commands.registerCommand(TOGGLE_INLINE_HEATMAP, async () => {
      const config = vscode.workspace.getConfiguration('attentionLens');
      await config.update(INLINE_HEATMAP_SETTING, !enabled(), vscode.ConfigurationTarget.Global);
      return enabled();
    }),
  );
  refreshAll();
}
