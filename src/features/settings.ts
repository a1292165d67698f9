// Typed access to the `attentionLens.*` settings (declared in package.json `contributes.configuration`).
import * as vscode from 'vscode';
import type { DType } from '../core/types';

export const SECTION = 'attentionLens';

export interface Settings {
  liveUpdate: boolean;
  debounceMs: number;
  dtype: DType;
  maxMatrixElements: number;
  /** Documents longer than this many MB (2^20 characters) are read only up to it. */
  maxFileMB: number;
  colorScale: string;
  decimals: number;
}

export function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    liveUpdate: config.get<boolean>('liveUpdate', true),
    debounceMs: Math.max(0, config.get<number>('debounceMs', 300)),
    dtype: config.get<DType>('dtype', 'float64') === 'float32' ? 'float32' : 'float64',
    maxMatrixElements: Math.max(1, config.get<number>('maxMatrixElements', 67_108_864)),
    maxFileMB: Math.max(0.001, config.get<number>('maxFileMB', 50)),
    colorScale: config.get<string>('colorScale', 'Viridis'),
    decimals: Math.min(12, Math.max(0, Math.round(config.get<number>('decimals', 4)))),
  };
}

/** Writes where the user's effective value comes from (workspace if set there, else user). */
export async function updateSetting<K extends keyof Settings>(key: K, value: Settings[K]): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const inspected = config.inspect(key);
  const target =
    inspected?.workspaceValue !== undefined
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
  await config.update(key, value, target);
}
