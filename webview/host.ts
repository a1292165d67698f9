// Where the panel's messages go. Inside VS Code: the extension host, through acquireVsCodeApi.
// In a standalone report: nobody — the page answers its own requests from the data embedded in
// it (switching problems, exports as downloads) and keeps its state in memory.
import type { HostToWebview, PanelData, PanelState, WebviewToHost } from '../src/protocol';
import { decodePanelData, REPORT_DATA_ID } from '../src/views/codec';
import { labelsOf, matrixExportText } from '../src/views/matrixExport';
import { viewOfKey } from '../src/views/matrixKeys';

export interface Host {
  standalone: boolean;
  post(message: WebviewToHost): void;
  getState(): unknown;
  setState(state: PanelState): void;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare const acquireVsCodeApi: (() => VsCodeApi) | undefined;

export function connectHost(deliver: (message: HostToWebview) => void): Host {
  if (typeof acquireVsCodeApi === 'function') {
    const api = acquireVsCodeApi();
    window.addEventListener('message', (event: MessageEvent<HostToWebview>) => deliver(event.data));
    return {
      standalone: false,
      post: (message) => api.postMessage(message),
      getState: () => api.getState(),
      setState: (state) => api.setState(state),
    };
  }
  return standaloneHost(deliver);
}

function download(fileName: string, blob: Blob): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function standaloneHost(deliver: (message: HostToWebview) => void): Host {
  const embedded = document.getElementById(REPORT_DATA_ID)?.textContent;
  const problems: PanelData[] = embedded ? decodePanelData(embedded) : [];
  let state: unknown;
  const show = (index: number) => {
    const data = problems[index];
    if (data) queueMicrotask(() => deliver({ type: 'data', data }));
  };
  return {
    standalone: true,
    post(message) {
      switch (message.type) {
        case 'ready':
          return show(0);
        case 'selectProblem':
          return show(message.problemIndex);
        case 'requestRegion':
          // The report embeds overviews only: there is no full matrix to cut a region from.
          return queueMicrotask(() => deliver({ type: 'region', requestId: message.requestId, view: null }));
        case 'requestVariants':
          // Nor a run to compute a larger problem's variants and walks from.
          return queueMicrotask(() => deliver({ type: 'variants', requestId: message.requestId, error: 'a saved report holds what came with the run; this view is computed when asked, in the panel in VS Code.' }));
        case 'export': {
          const bytes = message.base64 !== undefined ? Uint8Array.from(atob(message.base64), (c) => c.charCodeAt(0)) : message.text ?? '';
          return download(message.fileName, new Blob([bytes], { type: message.format === 'png' ? 'image/png' : 'image/svg+xml' }));
        }
        case 'exportMatrix': {
          const data = problems[message.problemIndex];
          const view = data && viewOfKey(data, message.head, message.matrix);
          if (!data || !view) return undefined;
          const matrix = { rows: view.rows, cols: view.cols, data: view.data };
          const pooled = view.rowBlock > 1 || view.colBlock > 1 ? '-overview' : '';
          const labels = labelsOf(message.matrix, view.rows, view.cols, data.tokens, data.keyTokens);
          const text = matrixExportText(message.format, message.matrix, matrix, labels);
          return download(`${message.matrix}${pooled}.${message.format}`, new Blob([text], { type: message.format === 'csv' ? 'text/csv' : 'application/json' }));
        }
        default:
          return undefined;
      }
    },
    getState: () => state,
    setState: (next) => {
      state = next;
    },
  };
}
