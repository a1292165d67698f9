import * as vscode from 'vscode';

// Arrays read from a paused program are stored in `Results` and shown in the panel under a URI of
// this scheme. No document holds them: nothing may open, re-run or reveal such a URI as a file.
export const DEBUG_SCHEME = 'attention-debug';

/** One URI per debug session: each stop's read replaces the previous one in the same panel. */
export function debugSessionUri(session: vscode.DebugSession): vscode.Uri {
  return vscode.Uri.from({ scheme: DEBUG_SCHEME, path: `/${session.name}`, query: `session=${session.id}` });
}

export function isDebugUri(uri: vscode.Uri): boolean {
  return uri.scheme === DEBUG_SCHEME;
}
