// The analysis half of `attention-lens heads` (issue 27): head scores, rollout, attention flow,
// comparing two runs and the induction probe, printed as JSON or a short text. Reading the
// inputs is not done here: saved attentions come through `HeadsSources.saved` (the views'
// reader), model folders through `HeadsSources.folder` (the whole-model runner, connected by the
// lead); an attention-only model JSON (examples/13-induction-head.json) runs here directly.
//   attention-lens heads (DIR --text T | DIR --ids … | FILE --ids …) [--compare DIR2|FILE2 | --text2 T2]
//                        [--flow] [--probe induction [--repeat R] [--seed S]] [--json]
import { readFileSync, statSync } from 'node:fs';
import { analyseStack, stackFlow } from '../core/heads/analysis';
import type { ScoreGrids } from '../core/heads/scores';
import { attentionOnlyModelOf, attentionOnlyStack } from '../core/heads/attentionOnly';
import { ranked } from '../core/heads/compare';
import { divergences } from '../core/heads/divergence';
import { DEFAULT_REPEAT, inductionProbe } from '../core/heads/probe';
import { HEAD_SCORE_NAMES } from '../core/heads/scores';
import type { AttentionStack } from '../core/heads/stack';
import { loadSavedAttentions } from '../core/heads/load';
import { type ProbeModel, probeModel } from '../core/model/probeModel';
import { failureLine } from './failure';
import { folderFiles } from '../node/modelFiles';

/** A bad input or a bad option: the CLI prints the message alone and exits 1. */
export class HeadsAnalysisError extends Error {}

/** A model the CLI can run on ids (and on text when it has a tokenizer: else --text is refused). */
export type HeadsModel = ProbeModel;

export interface HeadsSources {
  /** Saved attentions (.pt, .safetensors, .npy, .npz) with the ids given, checked by the reader. */
  saved(path: string, ids: number[] | undefined): AttentionStack;
  /** A model folder (config.json + weights + tokenizer.json). */
  folder(path: string): Promise<HeadsModel>;
}

/** A model folder (config.json + weights, tokenizer.json for --text) run by the whole-model runner. */
export function modelFolder(path: string): Promise<HeadsModel> {
  return probeModel(folderFiles(path));
}

/** What the CLI reads: saved files with the heads views' reader, folders with the model runner. */
export function cliHeadsSources(maxElements: number): HeadsSources {
  return { saved: (path, ids) => loadSavedAttentions(path, { maxElements }, ids).stack, folder: modelFolder };
}

/** Options only the analyses take: with one of them, or a model input, `heads` runs here. */
const ANALYSIS_OPTIONS = new Set(['--text', '--text2', '--compare', '--flow', '--probe', '--repeat', '--seed']);
/** Options of either half that take a value (the argument after them is not the input). */
const VALUE_OPTIONS = new Set(['--ids', '--text', '--text2', '--compare', '--probe', '--repeat', '--seed', '--layer', '--head', '--top']);

export function wantsAnalysis(argv: readonly string[]): boolean {
  if (argv.some((arg) => ANALYSIS_OPTIONS.has(arg))) return true;
  for (let i = 0; i < argv.length; i++) {
    if (VALUE_OPTIONS.has(argv[i])) i++;
    else if (!argv[i].startsWith('--')) return isFolder(argv[i]) || isAttentionOnlyModelFile(argv[i]);
  }
  return false;
}

export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface HeadsAnalysisArgs {
  input: string;
  ids?: number[];
  text?: string;
  compare?: string;
  text2?: string;
  flow: boolean;
  probe?: 'induction';
  repeat?: number;
  seed?: number;
  json: boolean;
}

export function parseHeadsAnalysisArgs(argv: readonly string[]): HeadsAnalysisArgs {
  const args: Partial<HeadsAnalysisArgs> = { flow: false, json: false };
  const value = (i: number, flag: string): string => {
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) throw new HeadsAnalysisError(`${flag} needs a value`);
    return next;
  };
  const integer = (text: string, flag: string, min: number): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new HeadsAnalysisError(`${flag} needs a whole number from ${min}, not \`${text}\``);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') args.json = true;
    else if (arg === '--flow') args.flow = true;
    else if (arg === '--ids') args.ids = idsOf(value(i++, arg));
    else if (arg === '--text') args.text = value(i++, arg);
    else if (arg === '--text2') args.text2 = value(i++, arg);
    else if (arg === '--compare') args.compare = value(i++, arg);
    else if (arg === '--repeat') args.repeat = integer(value(i++, arg), arg, 1);
    else if (arg === '--seed') args.seed = integer(value(i++, arg), arg, 0);
    else if (arg === '--probe') {
      const kind = value(i++, arg);
      if (kind !== 'induction') throw new HeadsAnalysisError(`--probe knows \`induction\` only, not \`${kind}\``);
      args.probe = kind;
    } else if (arg.startsWith('--')) throw new HeadsAnalysisError(`unknown option \`${arg}\``);
    else if (args.input === undefined) args.input = arg;
    else throw new HeadsAnalysisError(`unexpected argument \`${arg}\``);
  }
  if (args.input === undefined) throw new HeadsAnalysisError('no DIR or FILE given');
  if (args.ids && args.text !== undefined) throw new HeadsAnalysisError('give --ids or --text, not both');
  if (args.compare !== undefined && args.text2 !== undefined) throw new HeadsAnalysisError('give --compare or --text2, not both');
  if (args.text2 !== undefined && args.text === undefined) throw new HeadsAnalysisError('--text2 compares with the run on --text: give both');
  if (args.repeat !== undefined && !args.probe) throw new HeadsAnalysisError('--repeat belongs to --probe induction');
  return args as HeadsAnalysisArgs;
}

/** `1,2,3`, `1 2 3` or `[1, 2, 3]`. */
function idsOf(text: string): number[] {
  const parts = text.replace(/^\s*\[|\]\s*$/g, '').split(/[\s,]+/).filter((part) => part !== '');
  const ids = parts.map(Number);
  if (ids.length === 0 || ids.some((id) => !Number.isInteger(id) || id < 0)) throw new HeadsAnalysisError(`--ids needs whole numbers from 0, as 1,2,3: \`${text}\``);
  return ids;
}

/** True for the JSON file of an attention-only model (layers of to_query/to_key/to_value/to_stream). */
export function isAttentionOnlyModelFile(path: string): boolean {
  if (!path.toLowerCase().endsWith('.json')) return false;
  try {
    const json = JSON.parse(readFileSync(path, 'utf8')) as { layers?: { to_query?: unknown }[] };
    return Array.isArray(json.layers) && json.layers[0]?.to_query !== undefined;
  } catch {
    return false;
  }
}

function attentionOnlyModel(path: string): HeadsModel {
  const model = attentionOnlyModelOf(JSON.parse(readFileSync(path, 'utf8')), path);
  return { run: async (ids) => attentionOnlyStack(model, ids, path), vocabularySize: model.tokenEmbedding.rows, bos: model.bos };
}

type Input = { kind: 'model'; model: HeadsModel } | { kind: 'saved'; path: string };

async function inputOf(path: string, sources: HeadsSources, isFolder: (path: string) => boolean): Promise<Input> {
  if (isAttentionOnlyModelFile(path)) return { kind: 'model', model: attentionOnlyModel(path) };
  if (isFolder(path)) return { kind: 'model', model: await sources.folder(path) };
  return { kind: 'saved', path };
}

/** The ids a model runs: --ids as given, or --text through its tokenizer. */
async function idsFor(model: HeadsModel, ids: number[] | undefined, text: string | undefined, flag: string): Promise<number[]> {
  if (ids) return ids;
  if (text === undefined) throw new HeadsAnalysisError(`a model needs --ids or ${flag}`);
  if (!model.encode) throw new HeadsAnalysisError(`this model has no tokenizer: give --ids instead of ${flag}`);
  return model.encode(text);
}

async function stackOf(input: Input, args: HeadsAnalysisArgs, sources: HeadsSources, text = args.text, flag = '--text'): Promise<AttentionStack> {
  // --text2 is the second text: the ids given (if any) belong to the first run only.
  if (input.kind === 'model') return input.model.run(await idsFor(input.model, flag === '--text' ? args.ids : undefined, text, flag));
  if (args.text !== undefined) throw new HeadsAnalysisError('saved attentions take --ids (a file holds no tokenizer to read --text)');
  return sources.saved(input.path, args.ids);
}

export interface HeadsAnalysisReport {
  scores: ScoreGrids;
  rollout: number[][] | null;
  flow?: number[][];
  divergence?: number[][];
}

export interface ProbeReport {
  probe: 'induction';
  repeat: number;
  ids: number[];
  ranking: { layer: number; head: number; induction: number }[];
  scores: ScoreGrids;
}

export async function headsAnalysis(args: HeadsAnalysisArgs, sources: HeadsSources, isFolder: (path: string) => boolean): Promise<HeadsAnalysisReport | ProbeReport> {
  const input = await inputOf(args.input, sources, isFolder);
  if (args.probe) {
    if (input.kind !== 'model') throw new HeadsAnalysisError('--probe induction runs a model: give a model folder (or an attention-only model .json), not saved attentions');
    const repeat = args.repeat ?? DEFAULT_REPEAT;
    const result = await inductionProbe((ids) => input.model.run(ids), { repeat, seed: args.seed, vocabularySize: input.model.vocabularySize, bos: input.model.bos });
    return { probe: 'induction', repeat, ids: result.ids, ranking: result.ranking.map(({ layer, head, value }) => ({ layer, head, induction: value })), scores: result.scores };
  }
  const stack = await stackOf(input, args, sources);
  const report: HeadsAnalysisReport = await stackReport(stack);
  if (args.flow) {
    try {
      report.flow = rows(stackFlow(stack), stack.queryCount);
    } catch (error) {
      throw new HeadsAnalysisError(error instanceof RangeError ? error.message : String(error));
    }
  }
  if (args.compare !== undefined) {
    const other = await stackOf(await inputOf(args.compare, sources, isFolder), args, sources);
    report.divergence = await compared(stack, other);
  } else if (args.text2 !== undefined) {
    if (input.kind !== 'model') throw new HeadsAnalysisError('--text2 runs the model on a second text: give a model folder');
    report.divergence = await compared(stack, await stackOf(input, args, sources, args.text2, '--text2'));
  }
  return report;
}

/** Scores and rollout of a stack as the JSON report holds them. */
export async function stackReport(stack: AttentionStack): Promise<HeadsAnalysisReport> {
  const { scores, rollout } = await analyseStack(stack);
  return { scores, rollout: rollout && rows(rollout, stack.queryCount) };
}

async function compared(a: AttentionStack, b: AttentionStack): Promise<number[][]> {
  try {
    return await divergences(a, b);
  } catch (error) {
    throw new HeadsAnalysisError(error instanceof RangeError ? error.message : String(error));
  }
}

function rows(matrix: Float32Array | Float64Array, n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from(matrix.subarray(i * n, (i + 1) * n)));
}

/** The text form: each score as a layers × heads table, then the comparison or the probe's ranking. */
export function headsAnalysisText(report: HeadsAnalysisReport | ProbeReport): string {
  const cell = (value: number | null) => (value === null ? '—' : value.toFixed(3)).padStart(7);
  const table = (title: string, grid: (number | null)[][]) =>
    [title, `        ${grid[0].map((_, h) => `   h${h}`.padStart(7)).join('')}`, ...grid.map((row, l) => `  L${l}`.padEnd(8) + row.map(cell).join(''))].join('\n');
  const lines: string[] = [];
  if ('probe' in report) {
    lines.push(`induction probe: BOS + ${report.repeat} random tokens twice (${report.ids.length} tokens)`);
    lines.push(...report.ranking.slice(0, 10).map((h, k) => `  ${k + 1}. layer ${h.layer} head ${h.head}: induction ${h.induction.toFixed(3)}`));
    return lines.join('\n') + '\n';
  }
  for (const name of HEAD_SCORE_NAMES) lines.push(table(name + (name === 'entropy' ? ' (nats)' : ''), report.scores[name]));
  lines.push(report.rollout ? `rollout: ${report.rollout.length}×${report.rollout.length} (--json prints it)` : 'rollout: none (cross-attention)');
  if (report.divergence) {
    lines.push(table('divergence (Jensen–Shannon, nats, mean over queries)', report.divergence));
    const top = ranked(report.divergence).slice(0, 5);
    lines.push('most changed: ' + top.map((h) => `L${h.layer} H${h.head} ${h.value.toFixed(3)}`).join(', '));
  }
  return lines.join('\n') + '\n';
}

/** Runs `heads` with the analysis options; prints the report; one line on stderr and 1 for bad input. */
export async function headsAnalysisMain(argv: readonly string[], sources: HeadsSources, io: { out(text: string): void; err(text: string): void; isFolder?(path: string): boolean }): Promise<number> {
  try {
    const args = parseHeadsAnalysisArgs(argv);
    const report = await headsAnalysis(args, sources, io.isFolder ?? isFolder);
    io.out(args.json ? JSON.stringify(report) + '\n' : headsAnalysisText(report));
    return 0;
  } catch (error) {
    if (!(error instanceof Error) || error.name === 'TypeError' || error.name === 'ReferenceError') throw error;
    const message = error.message.split('\n')[0];
    if (argv.includes('--json')) io.out(failureLine('failure', message, 1));
    io.err(`attention-lens heads: ${message}\n`);
    return 1;
  }
}
