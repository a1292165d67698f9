// CodeLenses: above each problem `▶ Run attention`, `Show heatmap` and (after a run) its summary;
// above each matrix its role and shape. Ranges are computed in provideCodeLenses, commands in
// resolveCodeLens; lenses refresh whenever a read or a run lands in `Results`.
import * as vscode from 'vscode';
import type { DocumentAnalyzer } from './analysis';
import { COMMANDS } from './commandIds';
import { matrixTitle, runSummary } from './describe';
import { SELECTOR } from './languages';
import { lensPositionIn, problemLensPositionIn } from './notebook';
import type { Results } from './results';
import { readSettings } from './settings';

type LensKind =
  | { kind: 'run' | 'show' | 'summary'; problem: number }
  | { kind: 'matrix'; problem: number; matrix: number };

class AttentionLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly uri: vscode.Uri,
    readonly target: LensKind,
  ) {
    super(range);
  }
}

class AttentionCodeLensProvider implements vscode.CodeLensProvider<AttentionLens> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly analyzer: DocumentAnalyzer,
    private readonly results: Results,
  ) {}

  refresh(): void {
    this.changed.fire();
  }

  /** From the last reading even while a newer one is on its way (it refreshes the lenses when it
   * lands): asking for a read here would bypass the debounce of large documents. */
  async provideCodeLenses(document: vscode.TextDocument): Promise<AttentionLens[]> {
    const { parse } = this.analyzer.latest(document) ?? (await this.analyzer.read(document));
    const runs = this.results.get(document.uri.toString())?.runs ?? [];
    const lenses: AttentionLens[] = [];
    for (const problem of parse.problems) {
      const start = problemLensPositionIn(document, problem);
      if (start) {
        const top = new vscode.Range(start.line, 0, start.line, 0);
        const problemLens = (kind: 'run' | 'show' | 'summary') => new AttentionLens(top, document.uri, { kind, problem: problem.index });
        // A model directive's result opens from its run: it has no heatmap of its own to show.
        lenses.push(...(problem.model ? [problemLens('run')] : [problemLens('run'), problemLens('show')]));
        if (runs[problem.index]) lenses.push(problemLens('summary'));
      }
      problem.matrices.forEach((def, matrix) => {
        const at = lensPositionIn(document, def.nameRange);
        if (at) lenses.push(
          new AttentionLens(new vscode.Range(at, at), document.uri, { kind: 'matrix', problem: problem.index, matrix }),
        );
      });
    }
    return lenses;
  }

  resolveCodeLens(lens: AttentionLens): AttentionLens {
    const { uri, target } = lens;
    const documentRun = this.results.get(uri.toString());
    const problem = documentRun?.parse.problems[target.problem];
    switch (target.kind) {
      case 'run':
        lens.command = { title: problem?.model ? '▶ Run model' : '▶ Run attention', command: COMMANDS.runProblem, arguments: [uri, target.problem] };
        break;
      case 'show':
        lens.command = { title: 'Show heatmap', command: COMMANDS.showPanel, arguments: [uri, target.problem] };
        break;
      case 'summary': {
        const run = documentRun?.runs[target.problem];
        const outdated = run && documentRun && run.version !== documentRun.version && !readSettings(uri).liveUpdate;
        const title = run ? runSummary(run) + (outdated ? ' · outdated: run again' : '') : '';
        lens.command = { title, command: COMMANDS.showPanel, arguments: [uri, target.problem] };
        break;
      }
      case 'matrix': {
        const def = problem?.matrices[target.matrix];
        lens.command = { title: def ? matrixTitle(def) : '', command: '' };
        break;
      }
    }
    return lens;
  }
}

export function registerCodeLens(
  context: vscode.ExtensionContext,
  analyzer: DocumentAnalyzer,
  results: Results,
): void {
  const provider = new AttentionCodeLensProvider(analyzer, results);
  context.subscriptions.push(
    vscode.languages.registerCodeLensProvider(SELECTOR, provider),
    results.onDidChange(() => provider.refresh()),
  );
}
