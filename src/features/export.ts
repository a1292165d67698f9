// `Attention: Export Results…`: every result of the document as one JSON file, as CSV files (one
// per matrix) in a folder, or as one standalone HTML report that opens offline.
import * as vscode from 'vscode';
import { matrixToCsv, toJsonReport } from '../core/format';
import type { AttentionResult, Problem } from '../core/types';
import { labelsOf, matrixExportText } from '../views/matrixExport';
import { matrixOf } from '../views/matrixKeys';
import type { MatrixKey } from '../protocol';
import { renderReportHtml } from '../report/standaloneHtml';
import type { Analysis } from './documentAnalysis';
import type { DocumentRun } from '../host/results';

export type ExportFormat = 'json' | 'csv' | 'html';

/** Skips the pickers: `target` is the file (json, html) or the folder (csv) to write. */
export interface ExportArgs {
  format: ExportFormat;
  target: vscode.Uri;
}

const FORMATS: { format: ExportFormat; label: string; detail: string }[] = [
  { format: 'json', label: 'JSON', detail: 'every problem, every intermediate, in one file' },
  { format: 'csv', label: 'CSV', detail: 'one file per matrix, in a folder you choose' },
  { format: 'html', label: 'Standalone HTML', detail: 'the heatmaps in one file that opens offline' },
];

/** Writes the export and returns the files written (none when the user backed out). */
export async function exportResults(
  context: vscode.ExtensionContext,
  document: vscode.TextDocument,
  analysis: Analysis,
  run: DocumentRun,
  args?: ExportArgs,
): Promise<vscode.Uri[]> {
  const runs = run.runs.flatMap((r) => (r?.result && r.version === run.version ? [{ problem: r.problem, result: r.result }] : []));
  if (runs.length === 0) throw new Error('Nothing to export: no problem of this file ran successfully.');
  const chosen = args ?? (await ask(document));
  if (!chosen) return [];
  const files = await filesFor(context, chosen.format, runs, analysis);
  const written: vscode.Uri[] = [];
  if (chosen.format === 'csv') await vscode.workspace.fs.createDirectory(chosen.target);
  for (const file of files) {
    const uri = chosen.format === 'csv' ? vscode.Uri.joinPath(chosen.target, file.name) : chosen.target;
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(file.text));
    written.push(uri);
  }
  void vscode.window.showInformationMessage(`Attention: exported ${written.length} file${written.length === 1 ? '' : 's'}.`);
  return written;
}

async function ask(document: vscode.TextDocument): Promise<ExportArgs | undefined> {
  const picked = await vscode.window.showQuickPick(FORMATS, { title: 'Attention: Export Results', placeHolder: 'Export as…' });
  if (!picked) return undefined;
  const base = document.uri.path.replace(/\.[^./]*$/, '');
  if (picked.format === 'csv') {
    const folders = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Export CSV here' });
    return folders?.[0] && { format: 'csv', target: folders[0] };
  }
  const target = await vscode.window.showSaveDialog({
    defaultUri: document.uri.with({ path: `${base}.attention.${picked.format}` }),
    filters: picked.format === 'json' ? { JSON: ['json'] } : { HTML: ['html'] },
  });
  return target && { format: picked.format, target };
}

type Run = { problem: Problem; result: AttentionResult };

async function filesFor(
  context: vscode.ExtensionContext,
  format: ExportFormat,
  runs: Run[],
  analysis: Analysis,
): Promise<{ name: string; text: string }[]> {
  switch (format) {
    case 'json': {
      // The CLI's `run --json` shape, so scripts read both the same way.
      const outcomes = runs.map(({ problem, result }) => ({ problem, result, diagnostics: analysis.specs[problem.index]?.diagnostics ?? [] }));
      return [{ name: 'results.json', text: `${JSON.stringify(toJsonReport(analysis.parse.diagnostics, outcomes), null, 2)}\n` }];
    }
    case 'csv':
      return runs.flatMap(csvFiles);
    case 'html': {
      const read = async (path: string) => new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(context.extensionUri, path)));
      const [script, css] = await Promise.all([read('dist/webview.js'), read('media/panel.css')]);
      return [{ name: 'report.html', text: renderReportHtml(runs, { script, css }) }];
    }
  }
}

const HEAD_KEYS: MatrixKey[] = ['Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'givenWeights', 'output', 'dQ', 'dK', 'dV', 'dA', 'dS'];
const LAYER_FILES: [MatrixKey, string][] = [['input', 'input'], ['concat', 'concat'], ['layerOutput', 'output'], ['residual', 'residual']];

/** Every matrix of a result as labelled CSV (the panel's "Export matrix" format), named
 * `head1-weights`, `output`, …; whole-model gradients unlabelled. */
function csvFiles({ problem, result }: Run): { name: string; text: string }[] {
  const files: { name: string; text: string }[] = [];
  const add = (name: string, key: MatrixKey, head: number) => {
    const matrix = matrixOf(result, problem, head, key);
    if (!matrix || matrix.cols === 0) return; // a result of given weights alone computes no Q, K, V
    const labels = labelsOf(key, matrix.rows, matrix.cols, problem.tokens, problem.keyTokens);
    files.push({ name: `problem${problem.index + 1}-${name}.csv`, text: matrixExportText('csv', name, matrix, labels) });
  };
  result.heads.forEach((_, head) => HEAD_KEYS.forEach((key) => add(`head${head + 1}-${key}`, key, head)));
  for (const [key, name] of LAYER_FILES) add(name, key, 0);
  for (const name of ['dX', 'dWQ', 'dWK', 'dWV', 'dWO'] as const) {
    const matrix = result.gradients?.[name];
    if (matrix) files.push({ name: `problem${problem.index + 1}-${name}.csv`, text: matrixToCsv(matrix) });
  }
  return files;
}
