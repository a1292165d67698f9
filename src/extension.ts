// Activation wires the features together and does nothing heavy: documents are read after
// activation returns, and the worker thread starts with the first document read.
import * as vscode from 'vscode';
import { registerPanel } from './panel';
import { registerAnalysis } from './features/analysis';
import { registerCodeLens } from './features/codeLens';
import { registerCommands } from './features/commands';
import { registerDebugSource } from './features/debugSource';
import { registerHeads } from './features/heads';
import { registerHover } from './features/hover';
import { registerInlineHeatmap } from './features/inlineHeatmap';
import { registerLiveUpdate } from './features/liveUpdate';
import { registerModelPreparer } from './features/modelPrepare';
import { registerModels } from './features/models';
import { currentPlace, type Place, trackPlaces } from './features/place';
import { Results } from './host/results';
import { Runner } from './features/runner';
import { registerStatusBar } from './features/statusBar';
import { registerResidentModels } from './features/residentModels';
import { registerTensorFiles } from './features/tensorFile';
import { AttentionWorker } from './worker/client';
import type { GenerationStepInfo } from './protocol';

/** What `activate` returns: for other extensions and for the integration tests. */
export interface AttentionLensApi {
  /** Milliseconds `activate` took. */
  activationMs: number;
  results: Results;
  worker: Pick<AttentionWorker, 'kill' | 'starts' | 'running'>;
  /** The model folders the current worker was asked to get ready for a first run (features/modelPrepare.ts). */
  preparedModels(): string[];
  /** Every error a palette command showed since activation, oldest first. */
  commandErrors: string[];
  /** Each token a generation ("Attention: Generate…") chooses, as the worker posts it. */
  onDidGenerateStep: vscode.Event<GenerationStepInfo>;
  /** Where a palette command would act now (features/place.ts): a page's focus reaches the
   * extension a moment after its tab's, and a test waits for this rather than a fixed time. */
  currentPlace(): Place | undefined;
}

/** V8 heap of the worker. Matrices live in typed arrays outside this heap; their size is bounded
 * before a run starts by `attentionLens.maxMatrixElements`. The worker's copies of the documents'
 * text are on it (a 50 MB file is 50–100 MB of string, twice while an edit is applied). */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 64, stackSizeMb: 4 };

export function activate(context: vscode.ExtensionContext): AttentionLensApi {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('Attention Lens', { log: true });
  const results = new Results();
  const worker = new AttentionWorker(context.asAbsolutePath('dist/worker.js'), WORKER_LIMITS, (message) => log.info(message));
  context.subscriptions.push(log, results, { dispose: () => worker.dispose() });

  const analyzer = registerAnalysis(context, results, worker, log);
  const runner = new Runner(analyzer, results, worker, log);
  const panel = registerPanel(context, results, { regionOf: (matrix, region) => worker.regionOf(matrix, region), variantsOf: (spec, query, output) => worker.variantsOf(spec, query, output), editedAt: (uri) => analyzer.editedAt(uri) }, log);
  registerCodeLens(context, analyzer, results);
  registerHover(context, analyzer, results);
  registerInlineHeatmap(context, results);
  registerStatusBar(context, results);
  registerLiveUpdate(context, analyzer, runner, results);
  trackPlaces(context);
  const commandErrors: string[] = [];
  const preparer = registerModelPreparer(context, analyzer, worker, log);
  const models = registerModels(context, { worker, runner, results, panel, preparer, log });
  registerCommands(context, { analyzer, runner, results, panel, models, log, errors: commandErrors });
  registerTensorFiles(context, { worker, analyzer, results, panel, log });
  registerDebugSource(context, { runner, results, panel, log });
  registerHeads(context, { worker, analyzer, results, panel, models, log, errors: commandErrors });
  registerResidentModels(context, worker);

  const activationMs = performance.now() - started;
  log.info(`activated in ${activationMs.toFixed(1)} ms`);
  return { activationMs, results, worker, preparedModels: () => preparer.folders(), commandErrors, onDidGenerateStep: models.generated.event, currentPlace };
}
