// Typed access to the `attentionLens.*` settings (declared in package.json `contributes.configuration`).
import * as vscode from 'vscode';
import type { DType } from '../core/types';
import { readDelay } from './readDelay';

export const SECTION = 'attentionLens';

export interface Settings {
  liveUpdate: boolean;
  /** How long errors wait to appear while typing (a half-typed number must not flash red). */
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
    debounceMs: explicitDebounce(config) ?? ERROR_DELAY_MS,
    dtype: config.get<DType>('dtype', 'float64') === 'float32' ? 'float32' : 'float64',
    maxMatrixElements: Math.max(1, config.get<number>('maxMatrixElements', 67_108_864)),
    maxFileMB: Math.max(0.001, config.get<number>('maxFileMB', 50)),
    colorScale: config.get<string>('colorScale', 'Viridis'),
    decimals: Math.min(12, Math.max(0, Math.round(config.get<number>('decimals', 4)))),
  };
}

/** Errors wait this long after the last keystroke unless `attentionLens.debounceMs` says otherwise. */
const ERROR_DELAY_MS = 300;

function explicitDebounce(config: vscode.WorkspaceConfiguration): number | undefined {
  const value = config.get<number | null>('debounceMs');
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : undefined;
}

/** How long after an edit the document is read again (readDelay.ts), with the user's setting. */
export function readDelayMs(scope: vscode.ConfigurationScope | undefined, lastReadMs: number | undefined): number {
  return readDelay(lastReadMs, explicitDebounce(vscode.workspace.getConfiguration(SECTION, scope)));
}

/**
 * Writes where the user's effective value for `scope` comes from: its folder's settings if set
 * there (the settings are resource-scoped, so a multi-root workspace can set them per folder), else
 * the workspace's, else the user's.
 */
export async function updateSetting<K extends keyof Settings>(key: K, value: Settings[K], scope?: vscode.ConfigurationScope): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const inspected = config.inspect(key);
  const target =
    inspected?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspected?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await config.update(key, value, target);
}
