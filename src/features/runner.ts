// Runs problems of a document in the worker and stores the outcome in `Results`. Refuses, before
// anything starts, a run that would keep more numbers than `attentionLens.maxMatrixElements`.
// Runs that take longer than a moment show a cancellable progress notification.
import * as vscode from 'vscode';
import { runFootprint } from '../core/engine/cost';
import { referenceOnly } from '../core/engine/fast';
import { rangeContains } from '../core/location';
import type { AttentionSpec, DType, Problem } from '../core/types';
import { adoptResultView } from '../views/model';
import { RunCancelledError, type AttentionWorker } from '../worker/client';
import type { DocumentAnalyzer } from './analysis';
import type { Analysis } from './documentAnalysis';
import { hasDirectiveKey } from './directive';
import { cellOf } from '../host/notebookCells';
import { textAt } from './notebook';
import type { DocumentRun, ProblemRun, Results } from '../host/results';
import { readSettings, type Settings } from './settings';

/** Runs quicker than this never flash a notification. */
const PROGRESS_DELAY_MS = 400;
/** After the user's Cancel, how long a run may take to notice before its worker is restarted. */
const CANCEL_GRACE_MS = 500;

export interface RunOutcome {
  run?: DocumentRun;
  /** Problems that could not run or failed, with the reason (already in `run.runs[i].error`). */
  failures: { index: number; error: string }[];
  cancelled: boolean;
  /** The worker itself failed (crashed, was killed, ran out of memory). */
  workerError?: string;
}

export class Runner {
  /** dtypes picked in the panel, per document and problem: they win over directive and setting. */
  private readonly dtypePicks = new Map<string, Map<number, DType>>();

  constructor(
    private readonly analyzer: DocumentAnalyzer,
    private readonly results: Results,
    private readonly worker: AttentionWorker,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Remembers a dtype picked in the panel for one problem and runs it again with it. */
  pickDType(document: vscode.TextDocument, index: number, dtype: DType): Promise<RunOutcome> {
    const key = document.uri.toString();
    const picks = this.dtypePicks.get(key) ?? new Map<number, DType>();
    picks.set(index, dtype);
    this.dtypePicks.set(key, picks);
    return this.run(document, [index]);
  }

  forget(document: vscode.TextDocument): void {
    this.dtypePicks.delete(document.uri.toString());
  }

  /** Runs the given problems (default: all) of the document's current version. */
  async run(document: vscode.TextDocument, indices?: number[]): Promise<RunOutcome> {
    const analysis = await this.analyzer.read(document);
    const version = analysis.version;
    const { refused, runnable } = this.plan(document, analysis, indices ?? analysis.parse.problems.map((_, index) => index));
    const key = document.uri.toString();
    const computed = await this.compute(runKeyOf(document), runnable, analysis.parse.problems, version, vscode.workspace.asRelativePath(document.uri), document.uri.fsPath);
    const failures = [...refused.map((run) => ({ index: run.problem.index, error: run.error! })), ...computed.failures];
    for (const failure of failures) this.log.warn(failure.error);
    const runs = computed.cancelled ? refused : [...refused, ...computed.runs];
    return withCompactJson({ run: this.store(key, version, runs), failures, cancelled: computed.cancelled, workerError: computed.workerError });
  }

  /**
   * Runs one problem that no text document holds — arrays read from a paused program — and stores
   * it under `key` (a URI of its own), where the panel finds it as it finds a document's results.
   */
  async runDetached(key: string, problem: Problem, spec: AttentionSpec, title: string, dtype?: DType, notes: string[] = []): Promise<RunOutcome> {
    const settings = readSettings();
    const version = (this.results.get(key)?.version ?? 0) + 1;
    const withDType = { ...spec, options: { ...spec.options, dtype: dtype ?? settings.dtype } };
    const reason = refusal(withDType, problem, settings);
    const computed = reason
      ? { runs: [{ problem, version, error: reason, elapsedMs: 0 }], failures: [{ index: problem.index, error: reason }], cancelled: false, workerError: undefined }
      : await this.compute(key, [{ index: problem.index, spec: withDType }], [problem], version, title, title, notes);
    for (const failure of computed.failures) this.log.warn(failure.error);
    if (computed.cancelled) return withCompactJson({ run: this.results.get(key), failures: [], cancelled: true });
    const run: DocumentRun = { uri: key, version, parse: { problems: [problem], diagnostics: [] }, runs: computed.runs };
    this.results.set(run);
    return withCompactJson({ run, failures: computed.failures, cancelled: false, workerError: computed.workerError });
  }

  /** Stores under `key` (a URI of its own, as runDetached) that `problem` could not be made, and why: the panel says it. */
  failDetached(key: string, problem: Problem, error: string): void {
    const version = (this.results.get(key)?.version ?? 0) + 1;
    this.log.warn(error);
    this.results.set({ uri: key, version, parse: { problems: [problem], diagnostics: [] }, runs: [{ problem, version, error, elapsedMs: 0 }] });
  }

  /** Computes the runnable problems in the worker, superseding the last run under `runKey`; `title`
   * names them in the progress notification, `source` in the log; `notes` (how the numbers were
   * read) lead each result's warnings in the panel. */
  private async compute(runKey: string, runnable: { index: number; spec: AttentionSpec }[], problems: Problem[], version: number, title: string, source: string, notes: string[] = []) {
    const runs: ProblemRun[] = [];
    const failures: { index: number; error: string }[] = [];
    let cancelled = false;
    let workerError: string | undefined;
    if (runnable.length === 0) return { runs, failures, cancelled, workerError };
    const started = performance.now();
    const job = this.worker.run(runKey, runnable);
    this.showProgressIfSlow(job.outcomes, () => job.stop(CANCEL_GRACE_MS), title);
    try {
      const outcomes = await job.outcomes;
      const elapsedMs = performance.now() - started;
      for (const outcome of outcomes) {
        const problem = problems[outcome.index];
        if ('result' in outcome) {
          adoptResultView(outcome.result, notes.length > 0 ? { ...outcome.view, warnings: [...notes, ...outcome.view.warnings] } : outcome.view);
          const spec = runnable.find((run) => run.index === outcome.index)?.spec;
          runs.push({ problem, version, result: outcome.result, ...(spec ? { spec } : {}), elapsedMs });
          this.log.info(`ran ${label(problem)} of ${source}: ${outcome.result.elapsedMs.toFixed(1)} ms compute, ${elapsedMs.toFixed(1)} ms total`);
          for (const warning of outcome.result.warnings) this.log.warn(`${label(problem)}: ${warning}`);
        } else {
          runs.push({ problem, version, error: outcome.error, elapsedMs });
          failures.push({ index: outcome.index, error: outcome.error });
        }
      }
    } catch (error) {
      if (error instanceof RunCancelledError) {
        cancelled = true;
        this.log.info(`run of ${source} cancelled`);
      } else {
        const message = error instanceof Error ? error.message : String(error);
        workerError = message;
        for (const { index } of runnable) {
          runs.push({ problem: problems[index], version, error: message, elapsedMs: 0 });
          failures.push({ index, error: message });
        }
      }
    }
    return { runs, failures, cancelled, workerError };
  }

  /** Splits the problems into those that may run (with their spec) and those refused, with why. */
  private plan(document: vscode.TextDocument, analysis: Analysis, indices: number[]) {
    const settings = readSettings(document.uri);
    const refused: ProblemRun[] = [];
    const runnable: { index: number; spec: AttentionSpec }[] = [];
    for (const index of indices) {
      const problem = analysis.parse.problems[index];
      // A model directive runs through the model feature (features/models.ts), not as matrices.
      if (!problem || problem.model) continue;
      const { spec, diagnostics } = analysis.specs[index];
      const error = [...analysis.parse.diagnostics.filter((d) => rangeContains(problem.range, d.range)), ...diagnostics].find(
        (d) => d.severity === 'error',
      );
      const reason =
        error || !spec ? `${label(problem)} cannot run: ${error?.message ?? 'its matrices are incomplete'}` : refusal(spec, problem, settings);
      if (reason || !spec) refused.push({ problem, version: analysis.version, error: reason, elapsedMs: 0 });
      else runnable.push({ index, spec: this.withDType(spec, document, problem, settings) });
    }
    return { refused, runnable };
  }

  /** The dtype a run uses: picked in the panel, else the directive's, else `attentionLens.dtype`. */
  private withDType(spec: AttentionSpec, document: vscode.TextDocument, problem: Problem, settings: Settings): AttentionSpec {
    const picked = this.dtypePicks.get(document.uri.toString())?.get(problem.index);
    const directive = problem.directiveRange && hasDirectiveKey(textAt(document, problem.directiveRange), 'dtype');
    const dtype = picked ?? (directive ? spec.options.dtype : settings.dtype);
    return dtype === spec.options.dtype ? spec : { ...spec, options: { ...spec.options, dtype } };
  }

  private store(key: string, version: number, runs: ProblemRun[]): DocumentRun | undefined {
    const current = this.results.get(key);
    if (!current) return undefined;
    if (current.version !== version) {
      this.log.info(`results for version ${version} dropped: the document changed during the run`);
      return current;
    }
    if (runs.length === 0) return current;
    const merged = [...current.runs];
    for (const run of runs) merged[run.problem.index] = run;
    const next: DocumentRun = { ...current, runs: merged };
    this.results.set(next);
    return next;
  }

  private showProgressIfSlow(done: Promise<unknown>, cancel: () => void, title: string): void {
    let finished = false;
    const settle = () => (finished = true);
    done.then(settle, settle);
    setTimeout(() => {
      if (finished) return;
      void vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Attention: computing ${title}…`,
          cancellable: true,
        },
        (_progress, token) => {
          token.onCancellationRequested(cancel);
          return done.catch(() => undefined);
        },
      );
    }, PROGRESS_DELAY_MS);
  }
}

/**
 * The outcome as the run commands return it. Run from the UI (a CodeLens, the palette), a command's
 * result travels back to the workbench as JSON, where nobody reads it; the results inside `run`
 * (every n×n matrix, typed arrays as index-keyed objects) took ~45 s of the extension host's
 * thread to serialize for the 2048-token example. Its JSON is the summary alone; callers in this
 * extension host (tests, other commands) get the object itself.
 */
function withCompactJson(outcome: RunOutcome): RunOutcome {
  const { failures, cancelled, workerError } = outcome;
  return Object.defineProperty(outcome, 'toJSON', { value: () => ({ failures, cancelled, workerError }) });
}

/** What a newer run supersedes by: the document, or for a notebook cell its whole notebook (every
 * cell reads, runs and shows the one notebook's problems). */
function runKeyOf(document: vscode.TextDocument): string {
  return (cellOf(document)?.notebook.uri ?? document.uri).toString();
}

export function label(problem: Problem): string {
  return problem.name ? `problem ${problem.index + 1} ("${problem.name}")` : `problem ${problem.index + 1}`;
}

/** Why this spec must not start (too many numbers to keep), or undefined when it may. */
export function refusal(spec: AttentionSpec, problem: Problem, settings: Settings): string | undefined {
  const { numbers, description } = runFootprint(spec);
  if (numbers <= settings.maxMatrixElements) return undefined;
  return (
    `${label(problem)} was not run: it would keep ${numbers.toLocaleString('en-US')} numbers (${description}), ` +
    `more than attentionLens.maxMatrixElements = ${settings.maxMatrixElements.toLocaleString('en-US')}. ` +
    (referenceOnly(spec) === undefined
      ? 'Raise that setting, use fewer tokens, or compute the output alone in O(n·d) memory: attention-lens run FILE --output-only.'
      : 'Raise that setting or use fewer tokens.')
  );
}
