// attention-lens: the command-line front end over core/ — read a file, run every problem on the
// extension's engine (the WebAssembly fast path, which hands what it does not cover to the
// reference), print a step-by-step report or JSON, or write a standalone HTML report.
//   exit 0: no error diagnostic · 1: an error diagnostic or a failure · 2: usage error
// With --json every outcome of every command is one JSON object on stdout — the report, or
// `{"error": …}` for a failure (reportFailure) — and stderr holds at most a one-line summary.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { version } from '../../package.json';
import { runFootprint } from '../core/engine/cost';
import { referenceOnly } from '../core/engine/fast/index';
import { attentionOutputOnBackend, runAttentionOnBackend } from '../core/engine/native/select';
import { type ProblemOutcome, allDiagnostics, diagnosticLine, toJsonReport, toTextReport } from '../core/format';
import { rangeContains } from '../core/location';
import { parseDocument } from '../core/parse/index';
import { resolveReferences } from '../core/parse/tensors/resolve';
import { parseNotebook } from '../core/parse/notebook';
import { buildSpec } from '../core/spec';
import { type TensorFile, TensorReadError } from '../core/parse/tensors';
import type { Diagnostic, ParseResult, Problem } from '../core/types';
import { renderReportHtml } from '../report/standaloneHtml';
import { writeFailure } from './failure';
import { MODEL_USAGE, modelCommand } from './model';
import { HEADS_MAX_ELEMENTS, HEADS_USAGE, HeadsCommandError, parseHeadsArgs, runHeads } from './heads';
import { cliHeadsSources, headsAnalysisMain, wantsAnalysis } from './headsAnalysis';
import { checkpointProblem, isTensorFile, listTensors, loadTensorFile, loaderBeside, tensorListing, type TensorRunChoice } from './tensors';

const DEFAULT_MAX_FILE_MB = 256;
/** The default of the setting attentionLens.maxMatrixElements: 512 MiB of float64. */
const DEFAULT_MAX_MATRIX_ELEMENTS = 67_108_864;

const USAGE = `attention-lens ${version} — see attention computed on the matrices in a file

Usage:
  attention-lens run FILE [--json] [--problem N] [--output-only] [LIMITS]
      Read FILE (Markdown, Python, LaTeX, MATLAB, JSON or any text; a Jupyter notebook
      .ipynb cell by cell, printed arrays included), run every attention problem in it
      and print each step; --json prints one JSON object instead;
      --problem N runs only the N-th problem (1-based); --output-only computes only the
      output (and residual) by online softmax, keeping no n×n matrix, so very long inputs
      fit in memory (n = 16384 and beyond; scaled_dot and dot scores, no gradients).
      Text that loads tensors (X = np.load("acts.npy"), W_Q = load_file("m.safetensors")["…"])
      reads them from the files next to it.
  attention-lens run MODEL.safetensors|.pt|.pth|.npz [--x ACTS.npy | --x FILE.npz:KEY | --x KEY]
                     [--layer N|PREFIX] [--heads H] [--json] [--output-only]
      Attention of one layer of a checkpoint (q_proj/k_proj/v_proj/o_proj, query/key/value,
      in_proj_weight, c_attn, W_Q…) on X; --layer picks a layer (from 0, or by its prefix),
      --heads the head count (a state dict does not store it; default 1).
  attention-lens tensors FILE [--json]
      List the tensors of a .npy/.npz/.safetensors/.pt file: dtype, shape, statistics, layers.
${MODEL_USAGE}${HEADS_USAGE}
  attention-lens render FILE -o REPORT.html [--problem N] [--json] [LIMITS]
      Write one self-contained HTML report with the panel's views (opens offline);
      --json prints its diagnostics as one JSON object.
  attention-lens --help | --version

Limits (what the extension's settings of the same names do):
  --max-file-mb N            read no file larger than N MB (default ${DEFAULT_MAX_FILE_MB})
  --max-matrix-elements N    refuse a run that would keep more numbers than N
                             (default ${DEFAULT_MAX_MATRIX_ELEMENTS.toLocaleString('en-US')}); --output-only is not limited

With --json, every outcome is one JSON object on stdout, errors too:
  {"error": {"kind": "usage" | "failure" | "too-large" | "internal", "message": "…"}, "exitCode": N}
and stderr holds only a one-line summary of an error.

Exit status: 0 when nothing is wrong, 1 when a diagnostic is an error or the command failed,
2 on a usage error.
`;

class UsageError extends Error {}
/** A failure the user can act on (exit 1, message without a stack trace). */
class CliError extends Error {}

interface Arguments {
  command: 'run' | 'render' | 'tensors';
  file: string;
  json: boolean;
  outputOnly: boolean;
  problem?: number;
  output?: string;
  tensors: TensorRunChoice;
  maxFileMB: number;
  maxMatrixElements: number;
}

function parseArguments(argv: string[]): Arguments | 'help' | 'version' {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  if (argv.includes('--version') || argv.includes('-v')) return 'version';
  const [command, ...rest] = argv;
  if (command !== 'run' && command !== 'render' && command !== 'tensors') throw new UsageError(command ? `unknown command \`${command}\`` : 'no command given');
  const parsed: Partial<Arguments> = {
    command,
    json: false,
    outputOnly: false,
    maxFileMB: DEFAULT_MAX_FILE_MB,
    maxMatrixElements: DEFAULT_MAX_MATRIX_ELEMENTS,
    tensors: {},
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--json') parsed.json = true;
    else if (arg === '--output-only' && command === 'run') parsed.outputOnly = true;
    else if (arg === '--problem') {
      const n = Number(rest[++i]);
      if (!Number.isInteger(n) || n < 1) throw new UsageError('--problem needs a problem number from 1');
      parsed.problem = n;
    } else if (arg === '--max-file-mb' || arg === '--max-matrix-elements') {
      const n = Number(rest[++i]);
      if (!(n > 0)) throw new UsageError(`${arg} needs a positive number`);
      if (arg === '--max-file-mb') parsed.maxFileMB = n;
      else parsed.maxMatrixElements = n;
    } else if ((arg === '-o' || arg === '--output') && command === 'render') {
      parsed.output = rest[++i];
      if (!parsed.output) throw new UsageError(`${arg} needs a file name`);
    } else if ((arg === '--x' || arg === '--layer') && command === 'run') {
      const value = rest[++i];
      if (!value) throw new UsageError(`${arg} needs a value`);
      (parsed.tensors as TensorRunChoice)[arg === '--x' ? 'x' : 'layer'] = value;
    } else if (arg === '--heads' && command === 'run') {
      const heads = Number(rest[++i]);
      if (!Number.isInteger(heads) || heads < 1) throw new UsageError('--heads needs a whole number from 1');
      (parsed.tensors as TensorRunChoice).heads = heads;
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option \`${arg}\``);
    else if (parsed.file === undefined) parsed.file = arg;
    else throw new UsageError(`unexpected argument \`${arg}\``);
  }
  if (parsed.file === undefined) throw new UsageError('no FILE given');
  if (command === 'render' && parsed.output === undefined) throw new UsageError('render needs -o REPORT.html');
  return parsed as Arguments;
}

/** Runs the problems of one read; a spec the engine still rejects becomes a diagnostic. */
async function runRead(
  read: ParseResult,
  { problem: only, outputOnly, maxMatrixElements }: Arguments,
): Promise<{ readDiagnostics: Diagnostic[]; outcomes: ProblemOutcome[]; problems: Problem[] }> {
  if (only !== undefined && only > read.problems.length) {
    throw new UsageError(`--problem ${only}: the file has ${read.problems.length} ${read.problems.length === 1 ? 'problem' : 'problems'}`);
  }
  const chosen = only === undefined ? read.problems : [read.problems[only - 1]];
  const outcomes: ProblemOutcome[] = [];
  for (const problem of chosen) {
    const { spec, diagnostics } = buildSpec(problem);
    if (!spec) {
      outcomes.push({ problem, diagnostics });
      continue;
    }
    const footprint = runFootprint(spec);
    if (!outputOnly && footprint.numbers > maxMatrixElements) {
      const message =
        `Problem ${problem.index + 1} was not run: it would keep ${footprint.numbers.toLocaleString('en-US')} numbers (${footprint.description}), ` +
        `more than --max-matrix-elements ${maxMatrixElements.toLocaleString('en-US')}. ` +
        (referenceOnly(spec) === undefined
          ? 'Use --output-only (the output alone, in O(n·d) memory), raise --max-matrix-elements, or use fewer tokens.'
          : 'Raise --max-matrix-elements or use fewer tokens.');
      outcomes.push({ problem, diagnostics: [...diagnostics, { range: problem.range, severity: 'error', code: 'run-too-large', message }] });
      continue;
    }
    try {
      const run = outputOnly ? { outputOnly: await attentionOutputOnBackend(spec) } : { result: await runAttentionOnBackend(spec) };
      outcomes.push({ problem, diagnostics, options: spec.options, ...run });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      outcomes.push({ problem, diagnostics: [...diagnostics, { range: problem.range, severity: 'error', code: 'engine-error', message: `Could not compute: ${message}` }] });
    }
  }
  let readDiagnostics = only === undefined ? read.diagnostics : read.diagnostics.filter((d) => rangeContains(chosen[0].range, d.range));
  if (read.problems.length === 0) {
    const start = { line: 0, character: 0 };
    readDiagnostics = [
      ...readDiagnostics,
      { range: { start, end: start }, severity: 'error', code: 'no-problems', message: 'No attention problem found: write matrices such as X = [[1, 0], [0, 1]], W_Q = …, W_K = …, W_V = …' },
    ];
  }
  return { readDiagnostics, outcomes, problems: chosen };
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'model' && !argv.includes('--help') && !argv.includes('-h')) return modelCommand(argv.slice(1));
  if (argv[0] === 'heads' && !argv.includes('--help')) {
    // Scores and rollout are in every `heads` report; compare, flow, probe and model inputs are the analyses' own.
    if (wantsAnalysis(argv.slice(1))) return headsAnalysisMain(argv.slice(1), cliHeadsSources(HEADS_MAX_ELEMENTS), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
    return writeHeads(argv.slice(1));
  }
  const args = parseArguments(argv);
  if (args === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args === 'version') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (isTensorFile(args.file) || args.command === 'tensors') return runTensorFile(args);
  const text = readText(args.file, args.maxFileMB);
  const read = args.file.toLowerCase().endsWith('.ipynb') ? parseNotebook(text) : parseDocument(text);
  return report(args, await resolveReferences(read, loaderBeside(args.file, { maxElements: args.maxMatrixElements })), []);
}

/** `heads FILE …` (src/cli/heads.ts), its errors as this CLI's. */
async function writeHeads(argv: string[]): Promise<number> {
  try {
    process.stdout.write(await runHeads(parseHeadsArgs(argv)));
    return 0;
  } catch (error) {
    if (error instanceof HeadsCommandError) throw error.usage ? new UsageError(error.message) : new CliError(error.message);
    throw error;
  }
}

/** Runs what was read and prints (or renders) it; `notes` say how tensors became roles. */
async function report(args: Arguments, read: ParseResult, notes: string[]): Promise<number> {
  const { readDiagnostics, outcomes } = await runRead(read, args);
  const failed = allDiagnostics(readDiagnostics, outcomes).some((d) => d.severity === 'error');
  if (args.command === 'render') {
    render(args.output as string, outcomes);
    if (args.json) process.stdout.write(`${JSON.stringify({ report: args.output, diagnostics: toJsonReport(readDiagnostics, outcomes).diagnostics })}\n`);
    else for (const d of allDiagnostics(readDiagnostics, outcomes)) process.stderr.write(`${diagnosticLine(args.file, d)}\n`);
  } else if (args.json) process.stdout.write(`${JSON.stringify({ ...toJsonReport(readDiagnostics, outcomes), ...(notes.length > 0 ? { notes } : {}) })}\n`);
  else process.stdout.write(notes.map((note) => `note: ${note}\n`).join('') + toTextReport(args.file, readDiagnostics, outcomes));
  return failed ? 1 : 0;
}

/** `tensors FILE`, and `run`/`render` on a checkpoint: one layer's attention on the X chosen. */
async function runTensorFile(args: Arguments): Promise<number> {
  let content: TensorFile;
  try {
    content = await loadTensorFile(args.file, { maxElements: args.maxMatrixElements });
  } catch (error) {
    if (error instanceof TensorReadError) throw new CliError(error.message);
    throw new UsageError(`cannot read ${args.file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (args.command === 'tensors') {
    process.stdout.write(args.json ? `${JSON.stringify(tensorListing(content))}\n` : listTensors(args.file, content));
    return 0;
  }
  const made = await checkpointProblem(args.file, content, args.tensors, { maxElements: args.maxMatrixElements });
  if (typeof made === 'string') throw new CliError(made);
  return report(args, { problems: [made.problem], diagnostics: [] }, made.notes);
}

/** The file's text, refused (one line, exit 1) when larger than `maxFileMB`, before reading it. */
function readText(file: string, maxFileMB: number): string {
  try {
    const { size } = statSync(file);
    if (size > maxFileMB * 2 ** 20) {
      throw new CliError(
        `${file} is ${Number((size / 2 ** 20).toPrecision(3))} MB, larger than --max-file-mb ${maxFileMB}: raise that limit to read it.`,
      );
    }
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // Past ~512 M characters a file cannot be one JavaScript string, whatever --max-file-mb says.
    if (code === 'ERR_STRING_TOO_LONG') throw new CliError(`${file} is too large to read as text (more than 512 M characters).`);
    throw new UsageError(`cannot read ${file}: ${code ?? String(error)}`);
  }
}

/**
 * Writes the standalone HTML report of every problem that ran. The panel's script is the
 * webview bundle beside this one (dist/webview.js), its CSS media/panel.css of the package.
 */
function render(output: string, outcomes: ProblemOutcome[]): void {
  const asset = (file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      throw new CliError(`render needs ${file}; build the package first (npm run build) and run dist/cli.js`);
    }
  };
  const script = asset(join(__dirname, 'webview.js'));
  const css = asset(join(__dirname, '..', 'media', 'panel.css'));
  const runs = outcomes.flatMap(({ problem, result }) => (result ? [{ problem, result }] : []));
  writeFileSync(output, renderReportHtml(runs, { script, css }));
}

// `attention-lens run big.md | head` closes the pipe early: that is the reader's choice, not a crash.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

/** What a failure is, for the one place that reports it: every command fails by throwing
 * UsageError (exit 2) or CliError (exit 1); JavaScript's RangeError means the input is too large. */
function failureOf(error: unknown): { kind: 'usage' | 'failure' | 'too-large' | 'internal'; exitCode: 1 | 2; message: string } {
  if (error instanceof UsageError) return { kind: 'usage', exitCode: 2, message: error.message };
  if (error instanceof CliError) return { kind: 'failure', exitCode: 1, message: error.message };
  // JavaScript's own limits (a string or an array too long to build): the input's size, not a bug.
  if (error instanceof RangeError) return { kind: 'too-large', exitCode: 1, message: `this input is too large to process: ${error.message}. Try --problem N or --output-only.` };
  return { kind: 'internal', exitCode: 1, message: `internal error: ${error instanceof Error ? error.message : String(error)}` };
}

/** Reports a command's failure and returns its exit status. With --json: one JSON object on
 * stdout and a one-line summary on stderr; without: the message (a usage error with the usage
 * text, an internal error with its stack) on stderr. */
function reportFailure(error: unknown, json: boolean): number {
  const { kind, exitCode, message } = failureOf(error);
  const plain = kind === 'usage' ? `${message}\n\n${USAGE}` : kind === 'internal' ? `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` : message;
  return writeFailure(json, kind, message, exitCode, 'attention-lens', plain.replace(/\n$/, ''));
}

const argv = process.argv.slice(2);
main(argv).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.exitCode = reportFailure(error, argv.includes('--json'));
  },
);
