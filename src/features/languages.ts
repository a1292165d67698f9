// The documents Attention Lens reads, and how a directive line is written as a comment in each.
import * as vscode from 'vscode';

/** Language ids with an `onLanguage:` activation event in package.json (keep the two in step).
 * `objective-c` is what VS Code calls a `.m` file when no MATLAB extension is installed. */
export const LANGUAGES = [
  'markdown',
  'python',
  'latex',
  'tex',
  'matlab',
  'octave',
  'objective-c',
  'json',
  'jsonc',
  'yaml',
  'plaintext',
] as const;

/** Files the user edits (on disk, unsaved, or in a virtual workspace) and the cells of notebooks
 * (see notebook.ts) — not diff views, output channels or git's copies of old versions. */
const SCHEMES = ['file', 'untitled', 'vscode-vfs', 'vscode-notebook-cell'];

export const SELECTOR: vscode.DocumentSelector = LANGUAGES.flatMap((language) => SCHEMES.map((scheme) => ({ language, scheme })));

export function isSupported(document: vscode.TextDocument): boolean {
  return (LANGUAGES as readonly string[]).includes(document.languageId) && SCHEMES.includes(document.uri.scheme);
}

/** `attention: …` wrapped as a comment of the document's language, or undefined when the
 * language has no comments (JSON). */
export function directiveLine(document: vscode.TextDocument, args: string): string | undefined {
  const directive = `attention: ${args}`.trimEnd();
  switch (document.languageId) {
    case 'markdown':
      return `<!-- ${directive} -->`;
    case 'python':
    case 'yaml':
      return `# ${directive}`;
    case 'latex':
    case 'tex':
    case 'matlab':
    case 'octave':
      return `% ${directive}`;
    case 'objective-c':
      return document.uri.path.endsWith('.m') ? `% ${directive}` : `// ${directive}`;
    case 'json':
      return undefined;
    case 'jsonc':
      return `// ${directive}`;
    default:
      return directive;
  }
}
