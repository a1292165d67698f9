// The read-only view of tensor files (.npy, .npz, .safetensors, .pt/.pth): a custom editor listing
// every tensor's name, dtype, shape and statistics, and "Show attention" on one layer of the file
// with X from another tensor or from a matrix of an open text file, shown in the attention panel.
// The file is read and decoded in the worker (a 64 MB checkpoint never holds the host's thread);
// the host keeps the decoded tensors of an open view to build the problem the user asks for.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { looksLikeAttentions } from '../core/heads/saved';
import type { Tensor } from '../core/parse/tensors';
import { type AttentionLayer, attentionLayers, inputTensors, tensorMatrix, tensorProblem } from '../core/parse/tensors/roles';
import { buildSpec } from '../core/spec';
import type { DType, Matrix, MatrixDef } from '../core/types';
import { contentSecurityPolicy, htmlPage, newNonce } from '../views/html';
import { adoptResultView } from '../views/model';
import type { PanelApi } from '../panel';
import { type HostToTensorView, parseTensorViewMessage, type TensorViewData } from '../protocol';
import type { AttentionWorker, TensorFileRead } from '../worker/client';
import type { DocumentAnalyzer } from './analysis';
import { COMMANDS } from '../host/commandIds';
import { isVisionType, picturesBeside } from './pictures';
import { isSupported } from './languages';
import type { Results } from '../host/results';
import { refusal } from './runner';
import { readSettings } from './settings';

export const TENSOR_VIEW_TYPE = 'attentionLens.tensorFile';

export interface TensorFileDeps {
  worker: AttentionWorker;
  analyzer: DocumentAnalyzer;
  results: Results;
  panel: PanelApi;
  log: vscode.LogOutputChannel;
}

/** A candidate X: a matrix with where it came from. */
interface Input {
  id: string;
  label: string;
  matrix: () => Matrix | string;
  name: string;
  source: MatrixDef['source'];
}

/** Layer, X (an input id) and head count: what "Show attention" needs. */
export interface TensorAttentionChoice {
  layer: number;
  input: string;
  heads: number;
  /** Default: `attentionLens.dtype`; the panel's dtype control runs the same choice again with its own. */
  dtype?: DType;
}

/** What "Show attention" did: the conventions applied, or why it could not run. */
export interface TensorAttentionOutcome {
  error?: string;
  notes: string[];
}

export function registerTensorFiles(context: vscode.ExtensionContext, deps: TensorFileDeps): void {
  const files = new TensorFiles(deps);
  context.subscriptions.push(
    deps.panel.onDidRequestDtype(({ uri, dtype }) => void files.again(uri, dtype)),
    vscode.window.registerCustomEditorProvider(TENSOR_VIEW_TYPE, new TensorFileEditor(context.extensionUri, files, deps.log), {
      supportsMultipleEditorsPerDocument: true,
    }),
    vscode.commands.registerCommand(COMMANDS.showTensorAttention, (uri?: vscode.Uri, choice?: TensorAttentionChoice) => files.command(uri, choice)),
  );
}

/** Reads tensor files in the worker (once per open view) and runs "Show attention" on them. */
class TensorFiles {
  /** Files a view shows, and their last read (by modification time and size). */
  private readonly held = new Set<string>();
  private readonly reads = new Map<string, { version: string; read: Promise<TensorFileRead> }>();
  /** The last "Show attention" of each file, for the panel's dtype control. */
  private readonly shown = new Map<string, TensorAttentionChoice>();

  constructor(private readonly deps: TensorFileDeps) {}

  /** The file's tensors: kept while a view shows it, read again when it changed on disk. */
  async read(uri: vscode.Uri): Promise<TensorFileRead> {
    const key = uri.toString();
    const { mtime, size } = await vscode.workspace.fs.stat(uri);
    const version = `${mtime}:${size}`;
    const last = this.reads.get(key);
    if (last?.version === version) return last.read;
    const read = this.deps.worker.readTensorFile(uri.fsPath, readSettings(uri).maxMatrixElements);
    if (this.held.has(key)) this.reads.set(key, { version, read });
    return read;
  }

  /** Whether the file changed on disk since a view last read it. */
  async changed(uri: vscode.Uri): Promise<boolean> {
    const last = this.reads.get(uri.toString());
    const { mtime, size } = await vscode.workspace.fs.stat(uri);
    return last !== undefined && last.version !== `${mtime}:${size}`;
  }

  /** Keeps the file's decoded tensors while a view shows it. */
  hold(uri: vscode.Uri): vscode.Disposable {
    const key = uri.toString();
    this.held.add(key);
    return {
      dispose: () => {
        this.held.delete(key);
        this.reads.delete(key);
      },
    };
  }

  async inputs(uri: vscode.Uri): Promise<Input[]> {
    return [...tensorInputs(uri, (await this.read(uri)).file.tensors), ...(await this.textInputs())];
  }

  /** The palette command: with no choice given, asks for the layer, X and heads. */
  async command(uri: vscode.Uri | undefined, choice: TensorAttentionChoice | undefined): Promise<TensorAttentionOutcome | undefined> {
    const target = uri ?? activeTensorFile();
    if (!target) throw new Error('Open a tensor file (.npy, .npz, .safetensors, .pt) first.');
    const picked = choice ?? (await this.ask(target));
    if (!picked) return undefined;
    const outcome = await this.show(target, picked);
    if (outcome.error) void vscode.window.showErrorMessage(`Attention: ${outcome.error}`);
    return outcome;
  }

  private async ask(uri: vscode.Uri): Promise<TensorAttentionChoice | undefined> {
    const layers = attentionLayers((await this.read(uri)).file.tensors);
    if (layers.length === 0) throw new Error(`${path.basename(uri.path)} has no attention layer (no q_proj/k_proj, query/key, in_proj_weight, c_attn or W_Q/W_K names).`);
    const layer = layers.length === 1 ? 0 : (await vscode.window.showQuickPick(layers.map((l, i) => ({ label: l.prefix || '(top level)', index: i })), { title: 'Attention: which layer?' }))?.index;
    if (layer === undefined) return undefined;
    const input = await vscode.window.showQuickPick((await this.inputs(uri)).map((candidate) => ({ label: candidate.label, id: candidate.id })), { title: 'Attention: which X (one row per token)?' });
    if (!input) return undefined;
    const heads = await vscode.window.showInputBox({ title: 'Attention: how many heads?', value: String(layers[layer].heads ?? 1), validateInput: (v) => (/^[1-9]\d*$/.test(v) ? undefined : 'a whole number from 1') });
    return heads === undefined ? undefined : { layer, input: input.id, heads: Number(heads) };
  }

  /** The panel asked for another dtype: the same layer, X and heads again. */
  async again(uri: vscode.Uri, dtype: DType): Promise<void> {
    const choice = this.shown.get(uri.toString());
    if (!choice) return;
    const outcome = await this.show(uri, { ...choice, dtype });
    if (outcome.error) void vscode.window.showErrorMessage(`Attention: ${outcome.error}`);
  }

  /** Runs the layer on X in the worker and opens the attention panel on it. */
  async show(uri: vscode.Uri, choice: TensorAttentionChoice): Promise<TensorAttentionOutcome> {
    let content: TensorFileRead;
    try {
      content = await this.read(uri);
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error), notes: [] };
    }
    const layer = attentionLayers(content.file.tensors)[choice.layer];
    const input = (await this.inputs(uri)).find((candidate) => candidate.id === choice.input);
    if (!layer || !input) return { error: !layer ? `No layer ${choice.layer} in ${path.basename(uri.path)}.` : `No input ${choice.input}.`, notes: [] };
    const matrix = input.matrix();
    if (typeof matrix === 'string') return { error: matrix, notes: [] };
    const fileName = path.basename(uri.path);
    const made = tensorProblem({ file: fileName, tensors: content.file.tensors, layer, X: { matrix, name: input.name, source: input.source }, heads: choice.heads });
    if (typeof made === 'string') return { error: made, notes: [] };
    const settings = readSettings(uri);
    made.problem.options.dtype = choice.dtype ?? settings.dtype;
    const { spec, diagnostics } = buildSpec(made.problem);
    if (!spec) return { error: diagnostics.map((d) => d.message).join(' '), notes: made.notes };
    const refused = refusal(spec, made.problem, settings);
    if (refused) return { error: refused, notes: made.notes };
    const key = uri.toString();
    this.shown.set(key, choice);
    const started = performance.now();
    const [outcome] = await this.deps.worker.run(key, [{ index: 0, spec }]).outcomes;
    const elapsedMs = performance.now() - started;
    const parse = { problems: [made.problem], diagnostics };
    if ('error' in outcome) {
      this.deps.results.set({ uri: key, version: 0, parse, runs: [{ problem: made.problem, version: 0, error: outcome.error, elapsedMs }] });
      return { error: outcome.error, notes: made.notes };
    }
    // The panel states the conventions (transposes, splits, biases) with the run's warnings.
    adoptResultView(outcome.result, { ...outcome.view, warnings: [...made.notes, ...outcome.view.warnings] });
    this.deps.results.set({ uri: key, version: 0, parse, runs: [{ problem: made.problem, version: 0, result: outcome.result, elapsedMs }] });
    this.deps.log.info(`ran ${fileName} · ${layer.prefix || 'top level'} on ${input.name}: ${elapsedMs.toFixed(1)} ms`);
    this.deps.panel.show(uri, 0);
    return { notes: made.notes };
  }

  /** Matrices of the open text documents that could be X. */
  private async textInputs(): Promise<Input[]> {
    const inputs: Input[] = [];
    for (const document of vscode.workspace.textDocuments) {
      if (!isSupported(document)) continue;
      const problems = (await this.deps.analyzer.read(document)).parse.problems;
      problems.forEach((problem, p) =>
        problem.matrices.forEach((def, m) => {
          if (def.role !== 'X' && def.role !== undefined) return;
          inputs.push({
            id: `text:${document.uri.toString()}#${p}#${m}`,
            label: `${def.name} (${def.value.rows}×${def.value.cols}) — ${vscode.workspace.asRelativePath(document.uri)}, line ${def.range.start.line + 1}`,
            matrix: () => def.value,
            name: def.name,
            source: def.source,
          });
        }),
      );
    }
    return inputs;
  }
}

export function activeTensorFile(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputCustom && input.viewType === TENSOR_VIEW_TYPE ? input.uri : undefined;
}

class TensorFileEditor implements vscode.CustomReadonlyEditorProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly files: TensorFiles,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    const held = this.files.hold(uri);
    return { uri, dispose: () => held.dispose() };
  }

  resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): void {
    const { webview } = panel;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    webview.options = { enableScripts: true, localResourceRoots: [dist] };
    const nonce = newNonce();
    webview.html = htmlPage({
      csp: contentSecurityPolicy({ nonce, resourceSource: webview.cspSource }),
      title: path.basename(document.uri.path),
      head: `<style nonce="${nonce}">${STYLE}</style>`,
      bodyAttributes: 'data-mode="tensors"',
      body: `<script type="module" nonce="${nonce}" src="${webview.asWebviewUri(vscode.Uri.joinPath(dist, 'tensorFile.js')).toString()}"></script>`,
    });
    const post = (message: HostToTensorView) => void webview.postMessage(message);
    const folder = path.dirname(document.uri.fsPath);
    /** The pictures the view offers, by path (its messages name them by index). */
    let pictures: string[] = [];
    const sendTensors = async () => {
      try {
        const content = await this.files.read(document.uri);
        const modelType = await modelTypeBeside(document.uri);
        // A vision folder runs on a picture: those in and beside the folder are offered.
        pictures = modelType && isVisionType(modelType) ? await picturesBeside(folder) : [];
        const offered = modelType && isVisionType(modelType) ? { pictures: pictures.map((picture) => path.relative(folder, picture)) } : {};
        post({ type: 'tensors', data: { ...viewData(document.uri, content, attentionLayers(content.file.tensors), await this.files.inputs(document.uri)), ...(modelType ? { modelType } : {}), ...offered } });
      } catch (error) {
        post({ type: 'status', error: error instanceof Error ? error.message : String(error), notes: [] });
      }
    };
    // Rewritten on disk (a training run saved again): shown anew when the view comes back.
    const visibility = panel.onDidChangeViewState(async () => {
      if (panel.visible && (await this.files.changed(document.uri))) await sendTensors();
    });
    const subscription = webview.onDidReceiveMessage(async (raw: unknown) => {
      const message = parseTensorViewMessage(raw);
      if (!message) {
        this.log.warn(`tensor view: ignored a malformed message: ${JSON.stringify(raw)?.slice(0, 200)}`);
        return;
      }
      if (message.type === 'showHeads') {
        await vscode.commands.executeCommand(COMMANDS.showHeads, document.uri);
        return;
      }
      if (message.type === 'showAttention') {
        post({ type: 'status', ...(await this.files.show(document.uri, message)) });
        return;
      }
      if (message.type === 'runModel') {
        await vscode.commands.executeCommand(COMMANDS.runModel, folder, { text: message.text });
        return;
      }
      if (message.type === 'runModelOnImage') {
        const picture = message.picture === null ? undefined : pictures[message.picture];
        if (message.picture !== null && picture === undefined) return; // not a picture the view offered
        await vscode.commands.executeCommand(COMMANDS.runVisionOnImage, picture === undefined ? undefined : vscode.Uri.file(picture), folder);
        return;
      }
      await sendTensors();
    });
    panel.onDidDispose(() => {
      subscription.dispose();
      visibility.dispose();
    });
  }
}

/** The `model_type` of a config.json beside the file: the folder is a model the user can run. */
async function modelTypeBeside(uri: vscode.Uri): Promise<string | undefined> {
  try {
    const config: unknown = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(uri, '..', 'config.json'))));
    const modelType = typeof config === 'object' && config !== null ? (config as Record<string, unknown>).model_type : undefined;
    return typeof modelType === 'string' ? modelType : undefined;
  } catch {
    return undefined; // no config.json, or not JSON: not a model folder
  }
}

function tensorInputs(uri: vscode.Uri, tensors: readonly Tensor[]): Input[] {
  const file = path.basename(uri.path);
  return inputTensors(tensors).map((tensor) => ({
    id: `tensor:${tensor.key}`,
    label: `${tensor.key} (${tensor.shape.join('×')}) — this file`,
    matrix: () => tensorMatrix(tensor),
    name: tensor.key,
    source: { kind: 'tensor', file, key: tensor.key },
  }));
}

function viewData(uri: vscode.Uri, { file, summaries }: TensorFileRead, layers: AttentionLayer[], inputs: Input[]): TensorViewData {
  const metadataHeads = Number(file.metadata?.num_attention_heads ?? file.metadata?.heads ?? file.metadata?.num_heads);
  return {
    fileName: path.basename(uri.path),
    format: file.format,
    ...(file.metadata ? { metadata: file.metadata } : {}),
    tensors: file.tensors.map((tensor, i) => ({ key: tensor.key, dtype: tensor.dtype, shape: tensor.shape, summary: summaries[i] })),
    layers: layers.map((layer) => ({
      prefix: layer.prefix,
      roles: Object.entries(layer.projections).map(([role, source]) => ({
        role: `W_${role[1]}`,
        source: `${source.weight.key}${source.weight.slice ? ` [${'QKV'[source.weight.slice.index]} block]` : ''}${source.weight.transposed ? ' (transposed: nn.Linear stores Wᵀ)' : ''}${source.bias ? ` + ${source.bias.key}` : ''}`,
      })),
    })),
    inputs: inputs.map(({ id, label }) => ({ id, label })),
    heads: layers[0]?.heads ?? (Number.isInteger(metadataHeads) && metadataHeads > 0 ? metadataHeads : 1),
    attentions: layers.length === 0 && looksLikeAttentions(file.tensors),
  };
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1rem; }
.meta { color: var(--vscode-descriptionForeground); }
table { border-collapse: collapse; margin-top: 1rem; }
th, td { text-align: right; padding: 2px 10px; border-bottom: 1px solid var(--vscode-panel-border, #8884); font-variant-numeric: tabular-nums; }
th:first-child, td.key { text-align: left; font-family: var(--vscode-editor-font-family); }
#attention label, #model label { display: block; margin: 0.4rem 0; }
#attention select, #attention input, #model input { margin-left: 0.5rem; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, #8888); }
#attention button, #model button, #show-heads { margin-top: 0.5rem; padding: 4px 12px; background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; cursor: pointer; }
.error { color: var(--vscode-errorForeground); }
`;
