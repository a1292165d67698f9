// How every command reports a failure: with --json, one JSON object on stdout
// (`{"error": {kind, message}, "exitCode"}`) and a one-line summary on stderr, so a script reads
// JSON whatever happened; without, the message on stderr.

export type FailureKind = 'usage' | 'failure' | 'too-large' | 'internal';

/** The JSON line of a failure. */
export function failureLine(kind: FailureKind, message: string, exitCode: 1 | 2): string {
  return `${JSON.stringify({ error: { kind, message }, exitCode })}\n`;
}

/** Writes a failure as the command's output; returns its exit status. */
export function writeFailure(json: boolean, kind: FailureKind, message: string, exitCode: 1 | 2, prefix = 'attention-lens', plain = message): number {
  if (json) {
    process.stdout.write(failureLine(kind, message, exitCode));
    process.stderr.write(`${prefix}: ${message.split('\n')[0]}\n`);
  } else process.stderr.write(`${prefix}: ${plain}\n`);
  return exitCode;
}
