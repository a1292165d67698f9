// Hovers: on a matrix name its role, shape, statistics and formula; on a number its row and
// column (token labels when known); after a run, on a row of X, what that query attends to.
import * as vscode from 'vscode';
import { cellAtOffset } from '../core/parse/lineIndex';
import type { AttentionResult, MatrixDef, Problem } from '../core/types';
import type { MatrixStatistics } from '../core/statistics';
import type { DocumentAnalyzer } from './analysis';
import { matrixTitle, ROLE_NAMES, roleFormula } from './describe';
import { SELECTOR } from './languages';
import { rangeIn } from './notebook';
import type { Results } from '../host/results';
import { readSettings } from './settings';

/** Longer key lists show only the top keys. */
const MAX_TABLE_KEYS = 12;
const TOP_KEYS = 3;
const BAR_WIDTH = 10;
/** More heads than this are left to the panel. */
const MAX_HEADS = 4;

class AttentionHoverProvider implements vscode.HoverProvider {
  constructor(
    private readonly analyzer: DocumentAnalyzer,
    private readonly results: Results,
  ) {}

  async provideHover(document: vscode.TextDocument, position: vscode.Position): Promise<vscode.Hover | undefined> {
    const { parse, version, statistics } = await this.analyzer.read(document);
    const decimals = readSettings(document.uri).decimals;
    for (const problem of parse.problems) {
      for (const [index, def] of problem.matrices.entries()) {
        const nameRange = rangeIn(document, def.nameRange);
        if (nameRange?.contains(position)) {
          return new vscode.Hover(nameHover(def, problem, statistics[problem.index][index], decimals), nameRange);
        }
        if (!rangeIn(document, def.range)?.contains(position)) continue;
        const cell = cellAtOffset(def.cellOffsets, document.offsetAt(position));
        if (cell < 0) return undefined;
        const run = this.results.get(document.uri.toString())?.runs[problem.index];
        const result = run && run.version === version ? run.result : undefined;
        return new vscode.Hover(cellHover(def, problem, cell, result, decimals));
      }
    }
    return undefined;
  }
}

function nameHover(def: MatrixDef, problem: Problem, stats: MatrixStatistics, decimals: number): vscode.MarkdownString {
  const markdown = new vscode.MarkdownString();
  const role = def.role ? ROLE_NAMES[def.role] : 'not an attention matrix (unknown name)';
  markdown.appendMarkdown(`**${escape(matrixTitle(def))}** — ${role}\n\n`);
  markdown.appendMarkdown(`${statisticsText(stats, decimals)}\n\n`);
  markdown.appendMarkdown(`\`${roleFormula(def, problem)}\``);
  return markdown;
}

/** min / max / mean over the finite entries (the worker computed them), and how many are not finite. */
function statisticsText({ min, max, sum, finite, count }: MatrixStatistics, decimals: number): string {
  if (finite === 0) return 'no finite entries';
  const parts = [`min ${format(min, decimals)}`, `max ${format(max, decimals)}`, `mean ${format(sum / finite, decimals)}`];
  const other = count - finite;
  if (other > 0) parts.push(`${other} non-finite (±∞/NaN)`);
  return parts.join(' · ');
}

function cellHover(
  def: MatrixDef,
  problem: Problem,
  cell: number,
  result: AttentionResult | undefined,
  decimals: number,
): vscode.MarkdownString {
  const { cols } = def.value;
  const row = Math.floor(cell / cols);
  const col = cell % cols;
  const value = def.value.data[cell];
  const markdown = new vscode.MarkdownString();
  markdown.appendMarkdown(
    `**${escape(def.name)}** row ${row + 1}${tokenSuffix(rowTokens(def, problem), row)}, ` +
      `column ${col + 1}${tokenSuffix(colTokens(def, problem), col)}: \`${def.boolean ? String(value !== 0) : format(value, decimals)}\``,
  );
  if (def.role === 'X' && result) markdown.appendMarkdown(`\n\n${queryWeights(problem, result, row, decimals)}`);
  return markdown;
}

/** Labels of the rows: tokens for X/Q and for the queries of a mask; keys' tokens for context/K/V. */
function rowTokens(def: MatrixDef, problem: Problem): string[] | undefined {
  switch (def.role) {
    case 'X':
    case 'Q':
    case 'mask':
      return problem.tokens;
    case 'context':
    case 'K':
    case 'V':
      return problem.keyTokens ?? problem.tokens;
    default:
      return undefined;
  }
}

function colTokens(def: MatrixDef, problem: Problem): string[] | undefined {
  return def.role === 'mask' || def.role === 'padding' ? (problem.keyTokens ?? problem.tokens) : undefined;
}

function tokenSuffix(tokens: string[] | undefined, index: number): string {
  const token = tokens?.[index];
  return token === undefined ? '' : ` (“${escape(token)}”)`;
}

/** Query `row`'s weights over the keys in every head, as a table with bars, and its top keys. */
function queryWeights(problem: Problem, result: AttentionResult, row: number, decimals: number): string {
  const keyLabels = problem.keyTokens ?? problem.tokens;
  const keyName = (key: number) => keyLabels?.[key] ?? `k${key + 1}`;
  const sections: string[] = [];
  result.heads.slice(0, MAX_HEADS).forEach((head, h) => {
    const { weights } = head;
    if (row >= weights.rows) return;
    const rowWeights = Array.from(weights.data.subarray(row * weights.cols, (row + 1) * weights.cols));
    const order = rowWeights.map((_, key) => key).sort((a, b) => rowWeights[b] - rowWeights[a]);
    const title = result.heads.length > 1 ? `Head ${h + 1}: query ${row + 1}` : `Query ${row + 1}`;
    const top = order
      .slice(0, TOP_KEYS)
      .map((key) => `“${escape(keyName(key))}” ${percent(rowWeights[key])}`)
      .join(', ');
    const lines = [`**${title}** attends most to ${top}`];
    if (weights.cols <= MAX_TABLE_KEYS) {
      lines.push('', '| key | weight | |', '|---|---:|---|');
      rowWeights.forEach((weight, key) =>
        lines.push(`| ${escape(keyName(key))} | ${format(weight, decimals)} | ${bar(weight)} |`),
      );
    }
    sections.push(lines.join('\n'));
  });
  const hidden = result.heads.length - MAX_HEADS;
  if (hidden > 0) sections.push(`…and ${hidden} more head${hidden === 1 ? '' : 's'}: see the panel (Attention: Show Heatmap Panel).`);
  return sections.join('\n\n');
}

function bar(weight: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, weight)) * BAR_WIDTH);
  return '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled);
}

function percent(weight: number): string {
  return `${(weight * 100).toFixed(0)}%`;
}

function format(value: number, decimals: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '−∞';
  return Number(value.toFixed(decimals)).toString();
}

/** Escapes Markdown punctuation in user text (names, tokens). */
function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}

export function registerHover(context: vscode.ExtensionContext, analyzer: DocumentAnalyzer, results: Results): void {
  context.subscriptions.push(vscode.languages.registerHoverProvider(SELECTOR, new AttentionHoverProvider(analyzer, results)));
}
