import * as vscode from 'vscode';

// Results that no document holds — arrays read from a paused program, one head of a model run —
// are stored in `Results` and shown in the panel under URIs of these schemes. Nothing may open,
// re-run or reveal such a URI as a file, and a panel restored after a restart cannot show them.
export const DEBUG_SCHEME = 'attention-debug';
export const MODEL_SCHEME = 'attention-model';

/** One URI per debug session: each stop's read replaces the previous one in the same panel. */
export function debugSessionUri(session: vscode.DebugSession): vscode.Uri {
  return vscode.Uri.from({ scheme: DEBUG_SCHEME, path: `/${session.name}`, query: `session=${session.id}` });
}

export function isDebugUri(uri: vscode.Uri): boolean {
  return uri.scheme === DEBUG_SCHEME;
}

/** A result with no text behind it (a debugger's arrays, a model's head). */
export function isDetachedUri(uri: vscode.Uri): boolean {
  return uri.scheme === DEBUG_SCHEME || uri.scheme === MODEL_SCHEME;
}
