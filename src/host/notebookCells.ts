// Where a reader's position lies in VS Code's notebook editor, where each cell is a TextDocument of
// its own (scheme `vscode-notebook-cell`) and the reader's positions carry the cell they are in.
// The features and the panel place things with these.
import * as vscode from 'vscode';
import type { Position, Range } from '../core/types';

export const CELL_SCHEME = 'vscode-notebook-cell';

/** The notebook a cell document belongs to, and the cell's index in it. */
export function cellOf(document: vscode.TextDocument): { notebook: vscode.NotebookDocument; index: number } | undefined {
  if (document.uri.scheme !== CELL_SCHEME) return undefined;
  for (const notebook of vscode.workspace.notebookDocuments) {
    const cell = notebook.getCells().find((candidate) => candidate.document.uri.toString() === document.uri.toString());
    if (cell) return { notebook, index: cell.index };
  }
  return undefined;
}

/** A position in this document as the reader counts it: in a notebook cell, with its cell. */
export function readerPosition(document: vscode.TextDocument, { line, character }: vscode.Position): Position {
  const cell = cellOf(document)?.index;
  return cell === undefined ? { line, character } : { line, character, cell };
}

/** The document that holds a range the reader gave: `document` itself, or in a notebook the
 * cell's (undefined for a printed output, which is no text document). */
export function documentHolding(document: vscode.TextDocument, range: Range): vscode.TextDocument | undefined {
  if (range.start.cell === undefined) return document;
  if (range.start.output !== undefined) return undefined;
  return cellOf(document)?.notebook.cellAt(range.start.cell).document;
}
