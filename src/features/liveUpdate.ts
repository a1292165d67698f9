// Live update: after an edit has been read, a document that had results is run again, so the
// panel, hovers and CodeLens follow the text. A newer run of the same document cancels the older.
// While the text has errors (a number half typed) the last good results stay on screen.
// Settings that change what a run computes (dtype, size limit) re-run every document with results.
import * as vscode from 'vscode';
import type { DocumentAnalyzer } from './analysis';
import { hasErrors } from './documentAnalysis';
import type { Results } from '../host/results';
import type { Runner } from './runner';
import { readSettings, SECTION } from './settings';

const RUN_SETTINGS = ['dtype', 'maxMatrixElements'].map((key) => `${SECTION}.${key}`);

export function registerLiveUpdate(
  context: vscode.ExtensionContext,
  analyzer: DocumentAnalyzer,
  runner: Runner,
  results: Results,
): void {
  const rerun = async (document: vscode.TextDocument) => {
    const outcome = await runner.run(document);
    if (outcome.workerError) void vscode.window.showErrorMessage(`Attention: ${outcome.workerError}`);
  };
  context.subscriptions.push(
    analyzer.onDidAnalyze(({ document, analysis, hadRuns }) => {
      if (hadRuns && !hasErrors(analysis) && readSettings(document.uri).liveUpdate) void rerun(document);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      for (const document of vscode.workspace.textDocuments) {
        const ran = results.get(document.uri.toString())?.runs.some(Boolean);
        if (ran && RUN_SETTINGS.some((key) => event.affectsConfiguration(key, document.uri))) void rerun(document);
      }
    }),
  );
}
