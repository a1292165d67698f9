// The read-only view of tensor files (.npy, .npz, .safetensors, .pt/.pth): a custom editor listing
// every tensor's name, dtype, shape and statistics, and "Show attention" on one layer of the file
// with X from another tensor or from a matrix of an open text file, shown in the attention panel.
// The file is read and decoded in the worker (a 64 MB checkpoint never holds the host's thread);
// the host keeps the decoded tensors of an open view to build the problem the user asks for.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Tensor } from '../core/parse/tensors';
import { type AttentionLayer, attentionLayers, tensorMatrix, tensorProblem } from '../core/parse/tensors/roles';
import { buildSpec } from '../core/spec';
import type { Matrix, MatrixDef } from '../core/types';
import { contentSecurityPolicy, htmlPage, newNonce } from '../panel/html';
import { adoptResultView } from '../panel/model';
import type { PanelApi } from '../panel';
import { type HostToTensorView, parseTensorViewMessage, type TensorViewData } from '../protocol';
import type { AttentionWorker, TensorFileRead } from '../worker/client';
import type { DocumentAnalyzer } from './analysis';
import { isSupported } from './languages';
import type { Results } from './results';
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

export function registerTensorFiles(context: vscode.ExtensionContext, deps: TensorFileDeps): void {
  context.subscriptions.push(
    vscode.window.registerCustomEditorProvider(TENSOR_VIEW_TYPE, new TensorFileEditor(context.extensionUri, deps), {
      supportsMultipleEditorsPerDocument: true,
    }),
  );
}

class TensorFileEditor implements vscode.CustomReadonlyEditorProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: TensorFileDeps,
  ) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
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
    const read = this.deps.worker.readTensorFile(document.uri.fsPath, readSettings(document.uri).maxMatrixElements);
    let inputs: Input[] = [];
    const subscription = webview.onDidReceiveMessage(async (raw: unknown) => {
      const message = parseTensorViewMessage(raw);
      if (!message) {
        this.deps.log.warn(`tensor view: ignored a malformed message: ${JSON.stringify(raw)?.slice(0, 200)}`);
        return;
      }
      let content: TensorFileRead;
      try {
        content = await read;
      } catch (error) {
        post({ type: 'status', error: error instanceof Error ? error.message : String(error), notes: [] });
        return;
      }
      const layers = attentionLayers(content.file.tensors);
      if (message.type === 'ready') {
        inputs = [...tensorInputs(document.uri, content.file.tensors), ...this.textInputs()];
        post({ type: 'tensors', data: viewData(document.uri, content, layers, inputs) });
        return;
      }
      const layer = layers[message.layer];
      const input = inputs.find((candidate) => candidate.id === message.input);
      if (!layer || !input) return;
      post(await this.show(document.uri, content.file.tensors, layer, input, message.heads));
    });
    panel.onDidDispose(() => subscription.dispose());
  }

  /** Matrices of the open text documents that could be X. */
  private textInputs(): Input[] {
    const inputs: Input[] = [];
    for (const document of vscode.workspace.textDocuments) {
      if (!isSupported(document)) continue;
      const problems = this.deps.analyzer.analyze(document).parse.problems;
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

  /** Runs the layer on X in the worker and opens the attention panel on it. */
  private async show(uri: vscode.Uri, tensors: readonly Tensor[], layer: AttentionLayer, input: Input, heads: number): Promise<HostToTensorView> {
    const matrix = input.matrix();
    if (typeof matrix === 'string') return { type: 'status', error: matrix, notes: [] };
    const fileName = path.basename(uri.path);
    const made = tensorProblem({ file: fileName, tensors, layer, X: { matrix, name: input.name, source: input.source }, heads });
    if (typeof made === 'string') return { type: 'status', error: made, notes: [] };
    const { spec, diagnostics } = buildSpec(made.problem);
    if (!spec) return { type: 'status', error: diagnostics.map((d) => d.message).join(' '), notes: made.notes };
    const key = uri.toString();
    const started = performance.now();
    const [outcome] = await this.deps.worker.run(key, [{ index: 0, spec }]).outcomes;
    const elapsedMs = performance.now() - started;
    const parse = { problems: [made.problem], diagnostics };
    if ('error' in outcome) {
      this.deps.results.set({ uri: key, version: 0, parse, runs: [{ problem: made.problem, version: 0, error: outcome.error, elapsedMs }] });
      return { type: 'status', error: outcome.error, notes: made.notes };
    }
    // The panel states the conventions (transposes, splits, biases) with the run's warnings.
    adoptResultView(outcome.result, { ...outcome.view, warnings: [...made.notes, ...outcome.view.warnings] });
    this.deps.results.set({ uri: key, version: 0, parse, runs: [{ problem: made.problem, version: 0, result: outcome.result, elapsedMs }] });
    this.deps.log.info(`ran ${fileName} · ${layer.prefix || 'top level'} on ${input.name}: ${elapsedMs.toFixed(1)} ms`);
    this.deps.panel.show(uri, 0);
    return { type: 'status', notes: made.notes };
  }
}

function tensorInputs(uri: vscode.Uri, tensors: readonly Tensor[]): Input[] {
  const file = path.basename(uri.path);
  // Tensors named as inputs first (X, inputs, hidden_states…), then every other matrix.
  const named = /(^|\.)(x|e|inputs?|embeddings|hidden_?states|acts|activations)$/i;
  const matrices = tensors.filter((tensor) => tensor.shape.length === 2 || (tensor.shape.length > 2 && tensor.shape.slice(0, -2).every((size) => size === 1)));
  return [...matrices.filter((t) => named.test(t.key)), ...matrices.filter((t) => !named.test(t.key))].map((tensor) => ({
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
  };
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1rem; }
.meta { color: var(--vscode-descriptionForeground); }
table { border-collapse: collapse; margin-top: 1rem; }
th, td { text-align: right; padding: 2px 10px; border-bottom: 1px solid var(--vscode-panel-border, #8884); font-variant-numeric: tabular-nums; }
th:first-child, td.key { text-align: left; font-family: var(--vscode-editor-font-family); }
#attention label { display: block; margin: 0.4rem 0; }
#attention select, #attention input { margin-left: 0.5rem; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, #8888); }
#attention button { margin-top: 0.5rem; padding: 4px 12px; background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; cursor: pointer; }
.error { color: var(--vscode-errorForeground); }
`;
