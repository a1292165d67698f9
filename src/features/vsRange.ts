// The core's plain ranges ⇄ VS Code's classes (both 0-based line/character).
import * as vscode from 'vscode';
import type { Range } from '../core/types';

export function toVsRange(range: Range): vscode.Range {
  return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}
