// Helpers shared by the editor integration tests (bundled into each *.test.js).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { AttentionLensApi } from '../../src/extension';

export const EXTENSION_ID = 'attention-lens.attention-lens';

export async function activateApi(): Promise<AttentionLensApi> {
  const extension = vscode.extensions.getExtension<AttentionLensApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not loaded`);
  return extension.activate();
}

export function repoUri(...segments: string[]): vscode.Uri {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension);
  return vscode.Uri.joinPath(extension.extensionUri, ...segments);
}

export async function openExample(name: string): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument(repoUri('examples', name));
  return vscode.window.showTextDocument(document);
}

export async function openUntitled(language: string, content: string): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument({ language, content });
  return vscode.window.showTextDocument(document);
}

/** A numpy/PyTorch fixture of the engine (test/fixtures/engine/NAME.json). */
export function engineFixture(name: string): {
  expected: { heads: { weights: number[][]; output: number[][] }[]; output: number[][] };
} {
  return JSON.parse(readFileSync(repoUri('test', 'fixtures', 'engine', `${name}.json`).fsPath, 'utf8'));
}

/** First line whose text starts with `prefix` (after indentation). */
export function lineStartingWith(document: vscode.TextDocument, prefix: string): number {
  for (let line = 0; line < document.lineCount; line++) {
    if (document.lineAt(line).text.trimStart().startsWith(prefix)) return line;
  }
  assert.fail(`no line starts with ${JSON.stringify(prefix)}`);
}

/** The document's lenses as the provider gives them, none resolved: each must carry its command
 * from the start (features/codeLens.ts says why), so a lens that needs resolving has none here. */
export async function codeLenses(uri: vscode.Uri): Promise<{ line: number; title: string; command: string; args: unknown[] }[]> {
  const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 0)) ?? [];
  return lenses
    .filter((lens) => lens.command)
    .map((lens) => ({ line: lens.range.start.line, title: lens.command!.title, command: lens.command!.command, args: lens.command!.arguments ?? [] }));
}

export async function hoverText(uri: vscode.Uri, position: vscode.Position): Promise<string> {
  const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, position)) ?? [];
  return hovers
    .flatMap((hover) => hover.contents)
    .map((content) => (typeof content === 'string' ? content : content.value))
    .filter((text) => text.length > 0)
    .join('\n---\n');
}

export function ourDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'Attention Lens');
}

/** Polls until `probe` returns a value other than undefined (edits are read after a debounce). */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Rows of a matrix as arrays, for deepEqual-style comparisons. */
export function rowsOf(matrix: { rows: number; cols: number; data: ArrayLike<number> }): number[][] {
  return Array.from({ length: matrix.rows }, (_, r) => Array.from({ length: matrix.cols }, (_, c) => matrix.data[r * matrix.cols + c]));
}

export function assertClose(actual: number[][], expected: number[][], relative: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: row count`);
  actual.forEach((row, r) => {
    assert.equal(row.length, expected[r].length, `${what}: row ${r + 1} length`);
    row.forEach((value, c) => {
      const want = expected[r][c];
      const error = Math.abs(value - want) / Math.max(1, Math.abs(want));
      assert.ok(error <= relative, `${what}[${r + 1}, ${c + 1}] = ${value}, numpy says ${want}`);
    });
  });
}

/** Closes every editor, dropping unsaved test edits (no "save?" dialog). */
export async function closeAllEditors(): Promise<void> {
  for (let guard = 0; vscode.window.activeTextEditor && guard < 50; guard++) {
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/** Types `text` key by key into the open quick pick or input box whose title contains `title`, then
 * presses Enter — through the host's keyboard (test/runner/keyboard.mjs): VS Code gives an extension
 * no command that types into its own quick input. Fails where the host has no keyboard. */
export async function typeInQuickInput(title: string, text: string): Promise<void> {
  const keyboard = process.env.ATTENTION_LENS_TEST_KEYBOARD;
  assert.ok(keyboard, 'this host has no keyboard for the tests (test/runner/keyboard.mjs runs beside code-server only)');
  const response = await fetch(keyboard, { method: 'POST', body: JSON.stringify({ title, text }) });
  assert.ok(response.ok, `typing “${text}” into “${title}”: ${await response.text()}`);
}
