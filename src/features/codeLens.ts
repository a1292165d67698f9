// CodeLenses: above each problem `▶ Run attention`, `Show heatmap` and (after a run) its summary;
// above each matrix its role and shape. Lenses refresh whenever a read or a run lands in `Results`.
//
// Each lens carries its command from the start, with no resolveCodeLens step: VS Code keeps a
// lens's old command on screen until the new list's resolve comes back, and when a refresh lands
// while an older list's resolve is still on its way (a loaded machine), that resolve writes the
// old list's commands into the new list's lenses. Those commands name a released list, so a click
// does nothing ("Actual command not found") until the next refresh — seen in CI as a ▶ Run
// attention that never ran. The commands are a few strings per problem: cheap to make up front.
import * as vscode from 'vscode';
import type { DocumentAnalyzer } from './analysis';
import { COMMANDS } from '../host/commandIds';
import { matrixTitle, runSummary } from './describe';
import { SELECTOR } from './languages';
import { lensPositionIn, problemLensPositionIn } from './notebook';
import type { Results } from '../host/results';
import { readSettings } from './settings';

type LensKind =
  | { kind: 'run' | 'show' | 'summary'; problem: number }
  | { kind: 'matrix'; problem: number; matrix: number };

class AttentionCodeLensProvider implements vscode.CodeLensProvider {
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
  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const { parse } = this.analyzer.latest(document) ?? (await this.analyzer.read(document));
    const runs = this.results.get(document.uri.toString())?.runs ?? [];
    const lenses: vscode.CodeLens[] = [];
    const lens = (range: vscode.Range, target: LensKind) => new vscode.CodeLens(range, this.commandOf(document.uri, target));
    for (const problem of parse.problems) {
      const start = problemLensPositionIn(document, problem);
      if (start) {
        const top = new vscode.Range(start.line, 0, start.line, 0);
        const problemLens = (kind: 'run' | 'show' | 'summary') => lens(top, { kind, problem: problem.index });
        // A model directive's result opens from its run: it has no heatmap of its own to show.
        lenses.push(...(problem.model ? [problemLens('run')] : [problemLens('run'), problemLens('show')]));
        if (runs[problem.index]) lenses.push(problemLens('summary'));
      }
      problem.matrices.forEach((def, matrix) => {
        const at = lensPositionIn(document, def.nameRange);
        if (at) lenses.push(lens(new vscode.Range(at, at), { kind: 'matrix', problem: problem.index, matrix }));
      });
    }
    return lenses;
  }

  private commandOf(uri: vscode.Uri, target: LensKind): vscode.Command {
    const documentRun = this.results.get(uri.toString());
    const problem = documentRun?.parse.problems[target.problem];
    switch (target.kind) {
      case 'run':
        return { title: problem?.model ? (problem.model.generate !== undefined ? `▶ Generate ${problem.model.generate} tokens` : '▶ Run model') : '▶ Run attention', command: COMMANDS.runProblem, arguments: [uri, target.problem] };
      case 'show':
        return { title: 'Show heatmap', command: COMMANDS.showPanel, arguments: [uri, target.problem] };
      case 'summary': {
        const run = documentRun?.runs[target.problem];
        const outdated = run && documentRun && run.version !== documentRun.version && !readSettings(uri).liveUpdate;
        const title = run ? runSummary(run) + (outdated ? ' · outdated: run again' : '') : '';
        return { title, command: COMMANDS.showPanel, arguments: [uri, target.problem] };
      }
      case 'matrix': {
        const def = problem?.matrices[target.matrix];
        return { title: def ? matrixTitle(def) : '', command: '' };
      }
    }
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
