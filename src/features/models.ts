// Whole models from a folder: "Attention: Run Model on Text…" (also a CodeLens on a model's
// config.json, a directive `attention: model="…" text="…"`, the tensor-file view's "Run model"),
// and any layer and head of the run opened step by step in the panel. The run happens in the
// worker, which keeps it; the host keeps its summary and routes.
import { totalmem } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { headProblem, unreadHeadProblem } from '../core/model/headProblem';
import { DEFAULT_REPEAT } from '../core/heads/probe';
import { modelTypeOf, parseModelConfig, SUPPORTED_ENCODER_DECODER_TYPES } from '../core/model/config';
import { predictionText } from '../core/model/describe';
import type { Languages, ModelInput } from '../core/model/input';
import type { DType } from '../core/types';
import type { PanelApi } from '../panel';
import type { AttentionKind, GenerateRequest, GenerationStepInfo, LanguageOffer, ModelRunInput, ModelRunSummary } from '../protocol';
import { type GenerationProgress, RunCancelledError, type AttentionWorker } from '../worker/client';
import { GenerationFeed } from './generationFeed';
import { askDecoding } from './samplingQuestions';
import { COMMANDS } from '../host/commandIds';
import { MODEL_SCHEME } from '../host/debugUri';
import { currentPlace, lastModelPlace } from './place';
import type { ModelPreparer } from './modelPrepare';
import { isVisionConfig, isVisionFolder, visionFoldersBeside } from './pictures';
import type { Results } from '../host/results';
import type { RunOutcome, Runner } from './runner';

/** Runs quicker than this never flash a notification. */
const PROGRESS_DELAY_MS = 400;
/** Model folders remembered for the picker. */
const RECENT_KEY = 'attentionLens.recentModels';
const RECENT_COUNT = 8;
/** Share of the machine's memory a model run may plan for (it is refused up front past it). */
const MEMORY_SHARE = 0.6;

export interface ModelDeps {
  worker: AttentionWorker;
  runner: Runner;
  results: Results;
  panel: PanelApi;
  preparer: ModelPreparer;
  log: vscode.LogOutputChannel;
}

/** What "Generate…" runs: a text or ids, how many new tokens, the text as a chat message or not. */
export interface GenerateCommandRequest {
  input: { text: string } | { ids: number[] };
  maxNewTokens: number;
  chat?: boolean;
  sampling?: GenerateRequest['sampling'];
}

/** What the run command returns (tests read it). */
export interface ModelRunOutcome {
  summary?: ModelRunSummary;
  cancelled?: boolean;
  error?: string;
}

export function registerModels(context: vscode.ExtensionContext, deps: ModelDeps): ModelRuns {
  const models = new ModelRuns(context, deps);
  context.subscriptions.push(
    models.generated,
    vscode.commands.registerCommand(COMMANDS.runModel, (folder?: vscode.Uri | string, input?: ModelInput) => models.command(folder, input)),
    vscode.commands.registerCommand(COMMANDS.generate, (folder?: vscode.Uri | string, request?: GenerateCommandRequest) => models.generate(folder, request)),
    vscode.commands.registerCommand(COMMANDS.runVisionOnImage, (image?: vscode.Uri, folder?: vscode.Uri | string) => models.commandOnImage(image, folder)),
    vscode.commands.registerCommand(COMMANDS.openModelHead, (run?: number, layer?: number, head?: number, attention?: AttentionKind, step?: number) => models.openHead(run, layer, head, 'float32', attention, step)),
    vscode.commands.registerCommand(COMMANDS.runInductionProbe, (run?: number, repeat?: number, seed?: number) => models.probe(run, repeat, seed)),
    vscode.languages.registerCodeLensProvider({ pattern: '**/config.json' }, new ConfigLens()),
    deps.panel.onDidRequestDtype(({ uri, dtype }) => {
      if (uri.scheme === MODEL_SCHEME) void models.reopen(uri, dtype);
    }),
  );
  return models;
}

export class ModelRuns {
  /** Summaries of the runs the worker keeps, by their handle. */
  private readonly summaries = new Map<number, ModelRunSummary>();
  /** What each run ran on: a comparison runs a second checkpoint on the same input. */
  private readonly inputs = new Map<number, ModelRunInput>();
  private latest: ModelRunSummary | undefined;
  /** Each generated token as the worker posts it (the extension's API passes it on). */
  readonly generated = new vscode.EventEmitter<GenerationStepInfo>();
  /** The head each model URI shows, for the panel's dtype control. */
  private readonly shown = new Map<string, { run: number; layer: number; head: number; attention?: AttentionKind; step?: number }>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly deps: ModelDeps,
  ) {}

  /** The palette command and CodeLens: asks for what is not given, runs, then opens a head. */
  async command(folder: vscode.Uri | string | undefined, input: ModelInput | undefined): Promise<ModelRunOutcome | undefined> {
    // From the palette on a model run's heads page: that model, on a text asked for.
    const focused = folder === undefined ? currentPlace() : undefined;
    const target = folder === undefined ? (focused?.kind === 'model' ? focused.folder : await this.pickFolder()) : typeof folder === 'string' ? folder : modelFolder(folder);
    if (!target) return undefined;
    // The worker gets the folder ready while the text is typed.
    if (!input) void this.deps.preparer.now(target);
    const source = input ?? (await askInput());
    // An encoder–decoder folder also needs a target: asked for unless given (a directive's `target=`).
    const targeted = source && (await withTarget(target, source));
    // An mBART folder's languages, from its tokenizer's codes, unless given (a directive's `src_lang=`).
    const given = targeted && (await withLanguages(target, targeted, async () => (await this.deps.worker.prepareModel(target)).languages));
    if (!given) return undefined;
    const running = this.run(target, given);
    // Every layer × head at once (a click opens one step by step), predictions on top: the page
    // is made now and loads while the worker runs.
    const shown = vscode.commands.executeCommand(COMMANDS.showModelHeads, running, target);
    const outcome = await running;
    if (outcome.error) void vscode.window.showErrorMessage(`Attention: ${outcome.error}`);
    if (outcome.summary) this.announce(outcome.summary);
    await shown;
    return outcome;
  }

  /**
   * "Attention: Generate…" (also the CodeLens on a causal model's config.json and a directive's
   * `generate=N`): asks for the folder, text, count and chat as not given, then generates in the
   * worker. Its heads page is made at once and shows each token as it comes, with a Stop button.
   */
  async generate(folder: vscode.Uri | string | undefined, request: GenerateCommandRequest | undefined): Promise<ModelRunOutcome | undefined> {
    const focused = folder === undefined ? currentPlace() : undefined;
    const target = folder === undefined ? (focused?.kind === 'model' ? focused.folder : await this.pickFolder(GENERATE_PICK)) : typeof folder === 'string' ? folder : modelFolder(folder);
    if (!target) return undefined;
    if (!request) void this.deps.preparer.now(target);
    const given = request ?? (await askGeneration(target));
    if (!given) return undefined;
    const feed = new GenerationFeed(() => this.deps.worker.stopGeneration());
    const options = { maxNewTokens: given.maxNewTokens, ...(given.chat ? { chat: true } : {}), ...(given.sampling ? { sampling: given.sampling } : {}) };
    const running = this.run(target, given.input, {
      options,
      progress: (message) => {
        feed.receive(message);
        if (message.type === 'modelStep') this.generated.fire(message.step);
      },
    });
    void running.finally(() => feed.end());
    const shown = vscode.commands.executeCommand(COMMANDS.showModelHeads, running, target, feed);
    const outcome = await running;
    if (outcome.error) void vscode.window.showErrorMessage(`Attention: ${outcome.error}`);
    await shown;
    return outcome;
  }

  /**
   * "Attention: Run Vision Model on Image…" (the explorer's menu on a PNG or JPEG, the title bar of
   * a picture open in VS Code's image preview, the CodeLens on a vision folder's config.json, the
   * tensor view's "Run model" of a vision folder): asks for the picture (the one open in the image
   * preview, when one is) or the vision folder (those beside the picture, then the recent ones)
   * when not given, then runs as the text command does.
   */
  async commandOnImage(image: vscode.Uri | undefined, folder: vscode.Uri | string | undefined): Promise<ModelRunOutcome | undefined> {
    const picture = image ?? activeImagePreview() ?? (await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectMany: false, filters: { Pictures: ['png', 'jpg', 'jpeg'] }, openLabel: 'Run on this picture' }))?.[0];
    if (!picture) return undefined;
    const beside = picture.scheme === 'file' ? await visionFoldersBeside(picture.fsPath) : [];
    const target = folder === undefined ? await this.pickFolder(VISION_PICK, beside) : typeof folder === 'string' ? folder : modelFolder(folder);
    if (!target) return undefined;
    const bytes = await vscode.workspace.fs.readFile(picture);
    return this.command(target, { image: { name: path.basename(picture.fsPath), bytes } });
  }

  /** The induction probe on the model of a run: BOS and R seeded random tokens twice, in a heads page of its own. */
  async probe(runHandle: number | undefined, repeat = DEFAULT_REPEAT, seed = 0): Promise<ModelRunOutcome | undefined> {
    // From the palette: the run of the heads page in front (or last in front), else the latest run.
    const handle = runHandle ?? lastModelPlace()?.run;
    const summary = (handle === undefined ? undefined : this.summaries.get(handle)) ?? (runHandle === undefined ? this.latest : undefined);
    if (!summary) {
      void vscode.window.showErrorMessage('Attention: run a model first ("Attention: Run Model on Text…"): the probe runs that model.');
      return undefined;
    }
    const running = this.run(summary.folder, { probe: { repeat, seed } });
    const shown = vscode.commands.executeCommand(COMMANDS.showModelHeads, running, summary.folder);
    const outcome = await running;
    if (outcome.error) void vscode.window.showErrorMessage(`Attention: ${outcome.error}`);
    await shown;
    return outcome;
  }

  /** Runs `folder` on `input` in the worker (a newer run cancels this one); generates after it when asked. */
  async run(folder: string, input: ModelRunInput, generation?: { options: Omit<GenerateRequest, 'stopFlag'>; progress(message: GenerationProgress): void }): Promise<ModelRunOutcome> {
    // Not awaited: the update's round trip to the window took ~300 ms before the worker was asked.
    void this.remember(folder).catch((error: unknown) => this.deps.log.warn(`could not remember ${folder} as recently run: ${String(error)}`));
    const memoryLimitBytes = Math.floor(totalmem() * MEMORY_SHARE);
    const started = performance.now();
    // The host only waits while the worker runs: the log says how long its event loop ever stalled.
    const hostDelay = monitorEventLoopDelay({ resolution: 5 });
    hostDelay.enable();
    const job = this.deps.worker.runModel(folder, input, memoryLimitBytes, generation);
    this.showProgressIfSlow(job, path.basename(folder));
    try {
      const summary = await job;
      hostDelay.disable();
      this.summaries.set(summary.run, summary);
      this.inputs.set(summary.run, input);
      this.latest = summary;
      const { loadMs, forwardMs } = summary.timings;
      const generated = summary.generation ? `, generated ${summary.generation.steps.length} (${summary.generation.stoppedBy})` : '';
      this.deps.log.info(
        `ran ${summary.architecture} from ${folder} on ${summary.tokens.length} tokens${generated} (${summary.backend}): load ${loadMs.toFixed(0)} ms, forward ${forwardMs.toFixed(0)} ms, ` +
          `${(performance.now() - started).toFixed(0)} ms in all; the editor's event loop waited at most ${(hostDelay.max / 1e6).toFixed(1)} ms meanwhile`,
      );
      for (const warning of summary.warnings) this.deps.log.warn(`${path.basename(folder)}: ${warning}`);
      return { summary };
    } catch (error) {
      hostDelay.disable();
      if (error instanceof RunCancelledError) return { cancelled: true };
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log.error(`${folder}: ${message}`);
      return { error: message };
    }
  }

  /** Opens one head of a run in the panel, step by step; asks for whatever is not given. `attention`:
   * of which kind, for an encoder–decoder run (absent: the run's own, its cross-attention); `step`:
   * a generated run's decode step that chose that token. */
  async openHead(runHandle?: number, layer?: number, head?: number, dtype: DType = 'float32', attention?: AttentionKind, step?: number): Promise<RunOutcome | undefined> {
    const summary = runHandle === undefined ? this.summaries.get(lastModelPlace()?.run ?? -1) ?? this.latest : this.summaries.get(runHandle);
    if (!summary) {
      void vscode.window.showErrorMessage('Attention: run a model first ("Attention: Run Model on Text…").');
      return undefined;
    }
    const picked = layer !== undefined && head !== undefined ? { layer, head } : await pickHead(summary);
    if (!picked) return undefined;
    const uri = modelUri(summary);
    // A new panel's page (a second or more to load) loads while the worker drills down and runs the head.
    this.deps.panel.openForRun(uri, 0);
    try {
      const spec = await this.deps.worker.modelHead(summary.run, picked.layer, picked.head, attention, step);
      const problem = headProblem(spec);
      this.shown.set(uri.toString(), { run: summary.run, ...picked, ...(attention ? { attention } : {}), ...(step === undefined ? {} : { step }) });
      const outcome = await this.deps.runner.runDetached(uri.toString(), problem, spec, problem.name ?? 'model head', dtype);
      if (outcome.failures[0]) void vscode.window.showErrorMessage(`Attention: ${outcome.failures[0].error}`);
      return outcome;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      void vscode.window.showErrorMessage(`Attention: ${message}`);
      // The panel, made before the worker answered, says it too.
      this.deps.runner.failDetached(uri.toString(), unreadHeadProblem(`${summary.architecture} L${picked.layer} H${picked.head}`), message);
      return undefined;
    } finally {
      this.deps.panel.show(uri, 0);
    }
  }

  /** The panel's dtype control on a model's head: the same head again in that dtype. */
  async reopen(uri: vscode.Uri, dtype: DType): Promise<void> {
    const shown = this.shown.get(uri.toString());
    if (shown) await this.openHead(shown.run, shown.layer, shown.head, dtype, shown.attention, shown.step);
  }

  summary(run: number): ModelRunSummary | undefined {
    return this.summaries.get(run);
  }

  input(run: number): ModelRunInput | undefined {
    return this.inputs.get(run);
  }

  private announce(summary: ModelRunSummary): void {
    const first = summary.predictions[0];
    const said = first ? ` ${predictionText(first)}` : '';
    const warned = summary.warnings.length > 0 ? ` (${summary.warnings.join('; ')})` : '';
    void vscode.window
      .showInformationMessage(`Attention: ${summary.architecture} ran on ${summary.tokens.length} tokens.${said}${warned}`, 'Open a head…')
      .then((choice) => choice && this.openHead(summary.run));
  }

  /** Asks for a model folder: `beside` (a picture's neighbours) first, then the recently run, then the workspace's. */
  private async pickFolder(pick: FolderPick = TEXT_PICK, beside: string[] = []): Promise<string | undefined> {
    const found = await vscode.workspace.findFiles('**/config.json', '**/node_modules/**', 200);
    const folders: string[] = [];
    for (const uri of found) {
      if (uri.scheme !== 'file') continue;
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      if (/"model_type"\s*:/.test(text) && pick.accepts(text)) folders.push(path.dirname(uri.fsPath));
    }
    // A picture's neighbours, then the recent folders (the vision picker's only those that are vision folders), then the workspace's.
    const recent: string[] = [];
    for (const folder of this.context.globalState.get<string[]>(RECENT_KEY, [])) if (pick === TEXT_PICK || folders.includes(folder) || (await isVisionFolder(folder))) recent.push(folder);
    const ordered = [...new Set([...beside, ...recent, ...[...folders].sort()])];
    type Item = vscode.QuickPickItem & { folder?: string };
    const items: Item[] = ordered.map((folder) => {
      const said = [...(beside.includes(folder) ? ['beside the picture'] : []), ...(recent.includes(folder) ? ['recently run'] : [])];
      return { label: path.basename(folder), description: vscode.workspace.asRelativePath(folder), ...(said.length ? { detail: said.join(' · ') } : {}), folder };
    });
    items.push({ label: '$(folder-opened) Choose a folder…' });
    const picked = await vscode.window.showQuickPick(items, { title: pick.title, placeHolder: pick.placeHolder });
    if (!picked) return undefined;
    if (picked.folder) return picked.folder;
    const chosen = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Run this model' });
    return chosen?.[0]?.fsPath;
  }

  private async remember(folder: string): Promise<void> {
    const recent = this.context.globalState.get<string[]>(RECENT_KEY, []).filter((known) => known !== folder);
    await this.context.globalState.update(RECENT_KEY, [folder, ...recent].slice(0, RECENT_COUNT));
  }

  private showProgressIfSlow(job: Promise<unknown>, name: string): void {
    let finished = false;
    const settle = () => (finished = true);
    job.then(settle, settle);
    setTimeout(() => {
      if (finished) return;
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Attention: running ${name}…`, cancellable: true }, (_progress, token) => {
        token.onCancellationRequested(() => this.deps.worker.cancelModel());
        return job.catch(() => undefined);
      });
    }, PROGRESS_DELAY_MS);
  }
}

interface FolderPick {
  title: string;
  placeHolder: string;
  /** Whether a config.json's text belongs in the list. */
  accepts(configText: string): boolean;
}

/** The picture open in VS Code's own image preview, in front. */
function activeImagePreview(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputCustom && input.viewType === IMAGE_PREVIEW ? input.uri : undefined;
}

/** VS Code's built-in image preview's custom editor (package.json's editor/title button names it too). */
export const IMAGE_PREVIEW = 'imagePreview.previewEditor';

/** Whether config.json is a causal language model's, as the engine reads it (encoders and vision models do not generate). */
function isGeneratingConfig(text: string): boolean {
  try {
    const config = parseModelConfig(text);
    return config.family !== 'vision' && config.causal;
  } catch {
    return false;
  }
}

const GENERATE_PICK: FolderPick = { title: 'Attention: Generate', placeHolder: 'A causal language model folder (config.json, weights, tokenizer.json)', accepts: isGeneratingConfig };
const TEXT_PICK: FolderPick = { title: 'Attention: Run Model on Text', placeHolder: 'A model folder (config.json, weights, tokenizer.json)', accepts: () => true };
const VISION_PICK: FolderPick = { title: 'Attention: Run Vision Model on Image', placeHolder: 'A vision model folder (config.json, weights, preprocessor_config.json)', accepts: isVisionConfig };

/** A model folder from a URI of the folder itself, its config.json or any file in it. */
function modelFolder(uri: vscode.Uri): string {
  return /\.[^/\\]+$/.test(uri.fsPath) ? path.dirname(uri.fsPath) : uri.fsPath;
}

/** config.json's model_type names an encoder–decoder family (config.ts: SUPPORTED_ENCODER_DECODER_TYPES). */
function isEncoderDecoderConfig(text: string): boolean {
  const type = modelTypeOf(text);
  return type !== undefined && (SUPPORTED_ENCODER_DECODER_TYPES as readonly string[]).includes(type);
}

/** Target tokens the palette's "Generate" writes at most (a directive's `generate=N` chooses). */
const GENERATE_TOKENS = 20;

/** Whether `folder`'s config.json names an encoder–decoder family (false when there is none to read). */
export async function isEncoderDecoderFolder(folder: string): Promise<boolean> {
  const config = await vscode.workspace.fs.readFile(vscode.Uri.file(path.join(folder, 'config.json'))).then((bytes) => new TextDecoder().decode(bytes), () => '');
  return isEncoderDecoderConfig(config);
}

/** `input` with a target when `folder` is an encoder–decoder model and none was given: generated, or
 * typed; undefined when the user cancels. Any other folder, or a target already given, as it is. */
async function withTarget(folder: string, input: ModelRunInput): Promise<ModelRunInput | undefined> {
  if (!('text' in input || 'ids' in input) || input.target || !(await isEncoderDecoderFolder(folder))) return input;
  type Item = vscode.QuickPickItem & { generate?: number };
  const picked = await vscode.window.showQuickPick<Item>(
    [
      { label: '$(sparkle) Generate', description: `greedily, until the end token or ${GENERATE_TOKENS} tokens`, generate: GENERATE_TOKENS },
      { label: '$(edit) Type the target…', description: 'a translation or summary of your own, read after decoder_start_token_id' },
    ],
    { title: `Attention: ${path.basename(folder)} is an encoder–decoder model — its target?`, placeHolder: 'The decoder’s side: what the cross-attention aligns with the source' },
  );
  if (!picked) return undefined;
  if (picked.generate) return { ...input, target: { generate: picked.generate } };
  const text = await vscode.window.showInputBox({ title: `Attention: ${path.basename(folder)} — the target`, prompt: 'The target text (the decoder reads decoder_start_token_id, then its tokens)' });
  return text ? { ...input, target: { text } } : undefined;
}

/** `input` with its languages when its folder's tokenizer has language codes (mBART's) and none
 * were given: the source's for a source text, the target's for a target text or a generation, each
 * picked from the codes with the tokenizer's saved one first; undefined when the user cancels. */
async function withLanguages(folder: string, input: ModelRunInput, offered: () => Promise<LanguageOffer | undefined>): Promise<ModelRunInput | undefined> {
  if (!('text' in input || 'ids' in input) || !input.target || input.languages) return input;
  const offer = await offered();
  if (!offer) return input;
  const pick = async (what: 'source' | 'target', saved: string | undefined) => {
    const codes = saved ? [saved, ...offer.codes.filter((code) => code !== saved)] : offer.codes;
    const picked = await vscode.window.showQuickPick(
      codes.map((code) => ({ label: code, ...(code === saved ? { description: `the ${what} language the tokenizer was saved with` } : {}) })),
      { title: `Attention: ${path.basename(folder)} — the ${what}’s language`, placeHolder: `The language code its ${what === 'source' ? 'source text' : 'target'} is in (type to filter: en_XX, de_DE…)` },
    );
    return picked?.label;
  };
  const languages: Languages = {};
  if ('text' in input) {
    languages.source = await pick('source', offer.source);
    if (!languages.source) return undefined;
  }
  if (!('ids' in input.target)) {
    languages.target = await pick('target', offer.target);
    if (!languages.target) return undefined;
  }
  return Object.keys(languages).length > 0 ? { ...input, languages } : input;
}

/** The selection of the active editor, else typed. */
async function askInput(): Promise<ModelInput | undefined> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  if (selected.trim() !== '') return { text: selected };
  const text = await vscode.window.showInputBox({ title: 'Attention: Run Model on Text', prompt: 'The text to run the model on', value: 'The cat sat on the mat' });
  return text === undefined || text === '' ? undefined : { text };
}

/** Most new tokens offered: past this the answer is long to watch and its rows long to send. */
const MAX_NEW_TOKENS = 4096;

/**
 * The text (the selection, else typed), how many tokens, — when the folder has a chat template —
 * whether it is a chat message, and greedy or sampled. Each question stays when the focus moves (a
 * heads page that finishes loading takes it): a box that closed ended the whole flow unanswered.
 */
async function askGeneration(folder: string): Promise<GenerateCommandRequest | undefined> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const chatModel = await hasChatTemplate(folder);
  const questions = chatModel ? 4 : 3;
  const text = selected.trim() !== '' ? selected : await vscode.window.showInputBox({ title: `Attention: Generate (1/${questions})`, prompt: 'The text the model continues (or, for a chat model, your message)', value: 'Once upon a time', ignoreFocusOut: true });
  if (!text) return undefined;
  const count = await vscode.window.showInputBox({
    title: `Attention: Generate (2/${questions})`,
    prompt: 'How many tokens to generate at most (it stops earlier at the model’s end-of-text token)',
    value: '40',
    ignoreFocusOut: true,
    validateInput: (value) => (newTokenCount(value) === undefined ? `A whole number from 1 to ${MAX_NEW_TOKENS}` : undefined),
  });
  const maxNewTokens = count === undefined ? undefined : newTokenCount(count);
  if (maxNewTokens === undefined) return undefined;
  const chat = chatModel
    ? await vscode.window.showQuickPick(
        [
          { label: 'As a chat message', description: 'through the model’s chat template', chat: true },
          { label: 'As plain text', description: 'the model continues the text as written', chat: false },
        ],
        { title: 'Attention: Generate (3/4)', ignoreFocusOut: true },
      )
    : { chat: false };
  if (!chat) return undefined;
  const decoding = await askDecoding(folder, `Attention: Generate (${questions}/${questions})`);
  return decoding && { input: { text }, maxNewTokens, ...(chat.chat ? { chat: true } : {}), ...decoding };
}

function newTokenCount(value: string): number | undefined {
  const count = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  return count >= 1 && count <= MAX_NEW_TOKENS ? count : undefined;
}

/** A chat_template in tokenizer_config.json, or a chat_template.jinja (what core/model/chatTemplate.ts renders). */
async function hasChatTemplate(folder: string): Promise<boolean> {
  const read = async (name: string) => new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(path.join(folder, name))));
  const jinja = await read('chat_template.jinja').then(() => true, () => false);
  return jinja || (await read('tokenizer_config.json').then((text) => /"chat_template"\s*:/.test(text), () => false));
}

async function pickHead(summary: ModelRunSummary): Promise<{ layer: number; head: number } | undefined> {
  const layers = Array.from({ length: summary.layerCount }, (_, layer) => ({ label: `L${layer}`, layer }));
  const layer = await vscode.window.showQuickPick(layers, { title: `${summary.architecture}: which layer? (counted from 0, as on the heads page)` });
  if (!layer) return undefined;
  const heads = Array.from({ length: summary.headCount }, (_, head) => ({ label: `L${layer.layer} H${head}`, head }));
  const head = await vscode.window.showQuickPick(heads, { title: `${summary.architecture} L${layer.layer}: which head?` });
  return head && { layer: layer.layer, head: head.head };
}

/** One panel entry per model run: each head opened replaces the last. */
function modelUri(summary: ModelRunSummary): vscode.Uri {
  return vscode.Uri.from({ scheme: MODEL_SCHEME, path: `/${path.basename(summary.folder)}`, query: `run=${summary.run}` });
}


/** "▶ Run model on text…" above a Hugging Face config.json, its command made with it (codeLens.ts says why). */
class ConfigLens implements vscode.CodeLensProvider {
  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const text = document.getText();
    // A vision folder runs on a picture: its lens asks for one; an encoder–decoder folder asks for a source, then a target.
    if (!/"model_type"\s*:/.test(text)) return [];
    const at = new vscode.Range(0, 0, 0, 0);
    if (isVisionConfig(text)) return [new vscode.CodeLens(at, { title: '▶ Run on image…', command: COMMANDS.runVisionOnImage, arguments: [undefined, document.uri] })];
    const lenses = [new vscode.CodeLens(at, { title: isEncoderDecoderConfig(text) ? '▶ Run on source and target…' : '▶ Run model on text…', command: COMMANDS.runModel, arguments: [document.uri] })];
    // A causal language model writes: "Generate…" asks for the text and how many tokens.
    if (isGeneratingConfig(text)) lenses.push(new vscode.CodeLens(at, { title: 'Generate…', command: COMMANDS.generate, arguments: [document.uri] }));
    return lenses;
  }
}
