// Live update: after an edit has been read, a document that had results is run again, so the
// panel, hovers and CodeLens follow the text. A newer run of the same document cancels the older.
// While the text has errors (a number half typed) the last good results stay on screen.
import * as vscode from 'vscode';
import { hasErrors, type DocumentAnalyzer } from './analysis';
import type { Runner } from './runner';
import { readSettings } from './settings';

export function registerLiveUpdate(context: vscode.ExtensionContext, analyzer: DocumentAnalyzer, runner: Runner): void {
  context.subscriptions.push(
    analyzer.onDidAnalyze(async ({ document, analysis, hadRuns }) => {
      if (!hadRuns || hasErrors(analysis) || !readSettings(document.uri).liveUpdate) return;
      const outcome = await runner.run(document);
      if (outcome.workerError) void vscode.window.showErrorMessage(`Attention: ${outcome.workerError}`);
    }),
  );
}
