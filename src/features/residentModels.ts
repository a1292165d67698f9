// The models whose weights the worker keeps between runs (core/model/resident.ts), said in the
// status bar with the memory they hold, and the palette's Release Resident Models to let them go.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { COMMANDS } from '../host/commandIds';
import { formatBytes } from '../core/words';
import type { ResidentModelInfo } from '../protocol';
import type { AttentionWorker } from '../worker/client';

/** The status bar's words for the resident models: text and tooltip, or undefined when none is resident. */
export function residentText(resident: ResidentModelInfo[]): { text: string; tooltip: string } | undefined {
  if (resident.length === 0) return undefined;
  const total = resident.reduce((sum, model) => sum + model.bytes, 0);
  const how = (mode: string) => (mode === 'constants' ? 'pre-packed in ONNX Runtime' : 'as stored');
  return {
    text: `$(database) ${resident.length === 1 ? basename(resident[0].folder) : `${resident.length} models`} · ${formatBytes(total)}`,
    tooltip: `Attention Lens keeps these models' weights in memory between runs:\n${resident.map((m) => `• ${m.folder}: ${formatBytes(m.bytes)}, ${how(m.mode)}`).join('\n')}\nClick to release them (their next run reads the files again).`,
  };
}

export function registerResidentModels(context: vscode.ExtensionContext, worker: Pick<AttentionWorker, 'releaseModels' | 'onResidentModels'>): void {
  const item = vscode.window.createStatusBarItem('attentionLens.residentModels', vscode.StatusBarAlignment.Right, 99);
  item.name = 'Attention Lens: resident models';
  item.command = COMMANDS.releaseModels;
  const show = (resident: ResidentModelInfo[]) => {
    const words = residentText(resident);
    if (!words) return item.hide();
    item.text = words.text;
    item.tooltip = words.tooltip;
    item.show();
  };
  context.subscriptions.push(
    item,
    worker.onResidentModels(show),
    vscode.commands.registerCommand(COMMANDS.releaseModels, async () => {
      show(await worker.releaseModels());
      void vscode.window.setStatusBarMessage('Attention Lens: resident models released', 3000);
    }),
  );
}
