import * as vscode from 'vscode';
import type { Diagnostic } from '../core/types';
import { toVsRange } from './vsRange';

/** A reader or spec diagnostic as VS Code shows it, at `range` (default: its own). */
export function toVsDiagnostic(diagnostic: Diagnostic, range: vscode.Range = toVsRange(diagnostic.range)): vscode.Diagnostic {
  const message = diagnostic.suggestion ? `${diagnostic.message} ${diagnostic.suggestion}` : diagnostic.message;
  const result = new vscode.Diagnostic(range, message, SEVERITY[diagnostic.severity]);
  result.source = 'Attention Lens';
  result.code = diagnostic.code;
  return result;
}

const SEVERITY: Record<Diagnostic['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};
