// The status bar item: how many attention problems the active file holds and its last run's time.
import * as vscode from 'vscode';
import { COMMANDS } from '../host/commandIds';
import { formatMs } from './describe';
import { isSupported } from './languages';
import type { Results } from '../host/results';
import type { AttentionResult } from '../core/types';

const BACKEND_NAMES = { onnxruntime: 'ONNX Runtime (native)', wasm: 'WebAssembly', reference: 'the reference engine' } as const;

/** Which backends computed these results, e.g. "ONNX Runtime (native) and the reference engine". */
function backendsOf(results: AttentionResult[]): string {
  const names = new Set(results.map((result) => BACKEND_NAMES[result.backend?.name ?? 'reference']));
  return [...names].join(' and ');
}

export function registerStatusBar(context: vscode.ExtensionContext, results: Results): void {
  const item = vscode.window.createStatusBarItem('attentionLens.status', vscode.StatusBarAlignment.Right, 100);
  item.name = 'Attention Lens';
  item.command = COMMANDS.runFile;

  const update = () => {
    const document = vscode.window.activeTextEditor?.document;
    const run = document && isSupported(document) ? results.get(document.uri.toString()) : undefined;
    const count = run?.parse.problems.length ?? 0;
    if (!run || count === 0) {
      item.hide();
      return;
    }
    const ran = run.runs.flatMap((r) => (r?.result ? [r] : []));
    // The engine's time, as CodeLens and panel show it; the round trip (worker start, transfer) in the tooltip.
    const compute = ran.reduce((sum, r) => sum + r.result!.elapsedMs, 0);
    const roundTrip = Math.max(0, ...ran.map((r) => r.elapsedMs));
    // The hint of a native backend that could not run: the WebAssembly kernels computed instead.
    const fallback = ran.find((r) => r.result!.backend?.fallback)?.result!.backend!.fallback;
    item.text = `$(symbol-array) ${count} attention problem${count === 1 ? '' : 's'}${ran.length > 0 ? ` · ${formatMs(compute)}` : ''}${fallback ? ' $(info)' : ''}`;
    item.tooltip =
      ran.length > 0
        ? `Attention Lens: last run computed in ${formatMs(compute)} (${formatMs(roundTrip)} with the trip to the worker) on ${backendsOf(ran.map((r) => r.result!))}.${fallback ? ` ${fallback}: WebAssembly computed instead.` : ''} Click to run this file again.`
        : 'Attention Lens: click to run every problem in this file.';
    item.show();
  };

  context.subscriptions.push(
    item,
    results.onDidChange(({ uri }) => {
      if (uri === vscode.window.activeTextEditor?.document.uri.toString()) update();
    }),
    vscode.window.onDidChangeActiveTextEditor(update),
  );
  update();
}
