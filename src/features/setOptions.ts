// `Attention: Set Options…`: pick an option of the problem at the cursor, pick or type its value,
// and the `attention:` directive is written or edited in place — one undoable edit.
import * as vscode from 'vscode';
import { DEFAULT_ROPE_BASE } from '../core/parse/directive';
import type { AttentionOptions, Problem } from '../core/types';
import { argumentSpan, withDirectiveWord } from './directive';
import { directiveLine } from './languages';
import { toVsRange } from './vsRange';

export type OptionId =
  | 'heads'
  | 'kv_heads'
  | 'causal'
  | 'scale'
  | 'score'
  | 'sigma'
  | 'dtype'
  | 'pe'
  | 'grad'
  | 'residual'
  | 'name'
  | 'rope'
  | 'rope_layout'
  | 'temperature'
  | 'softcap'
  | 'alibi'
  | 'window'
  | 'prefix'
  | 'sinks'
  | 'decode';

/** What a command caller passes to skip the pickers (tests, keybindings): the value as a user
 * would pick or type it; `''` removes the option. */
export interface SetOptionArgs {
  option: OptionId;
  value: string;
}

interface OptionSpec {
  id: OptionId;
  label: string;
  describe(options: AttentionOptions): string;
  /** Fixed choices (QuickPick); otherwise an InputBox validated by `validate`. */
  choices?: string[];
  prompt?: string;
  validate?(value: string): string | undefined;
  /** The directive word for a value, or undefined to remove the option. */
  word(value: string): string | undefined;
}

const positiveInteger = (value: string) =>
  value === '' || /^[1-9]\d*$/.test(value.trim()) ? undefined : 'A whole number ≥ 1 (or empty to remove).';
const positiveNumber = (value: string) =>
  value === '' || (Number.isFinite(Number(value)) && Number(value) > 0) ? undefined : 'A number > 0 (or empty for the default).';
const flag = (key: string) => (value: string) => (value === 'on' ? key : undefined);
const keyValue = (key: string, defaultValue?: string) => (value: string) =>
  value.trim() === '' || value === defaultValue ? undefined : `${key}=${value.trim()}`;

const ropeBase = (value: string) =>
  /^(|on|off)$/.test(value.trim()) || Number(value) > 1 ? undefined : 'A base above 1 such as 10000 (on = 10000, empty or off removes RoPE).';
const ropeWord = (value: string) => {
  const v = value.trim();
  if (v === '' || v === 'off') return undefined;
  return v === 'on' || Number(v) === DEFAULT_ROPE_BASE ? 'rope' : `rope=${v}`;
};

export const OPTIONS: OptionSpec[] = [
  { id: 'heads', label: 'heads', describe: (o) => String(o.heads), prompt: 'Number of attention heads (d_model must divide by it)', validate: positiveInteger, word: keyValue('heads', '1') },
  { id: 'kv_heads', label: 'kv_heads', describe: (o) => String(o.kvHeads ?? o.heads), prompt: 'Key/value heads for grouped-query attention (must divide heads; empty = heads)', validate: positiveInteger, word: keyValue('kv_heads') },
  {
    id: 'causal',
    label: 'causal',
    describe: (o) => o.causal ?? 'none',
    choices: ['none', 'top-left', 'bottom-right'],
    word: (value) => (value === 'top-left' ? 'causal' : value === 'bottom-right' ? 'causal=bottom-right' : undefined),
  },
  { id: 'scale', label: 'scale', describe: (o) => (o.scale === undefined ? '1/√d_k' : String(o.scale)), prompt: 'Multiplier of Q·Kᵀ (empty = 1/√d_k)', validate: positiveNumber, word: keyValue('scale') },
  { id: 'score', label: 'score', describe: (o) => o.score, choices: ['scaled_dot', 'dot', 'general', 'additive', 'gaussian'], word: keyValue('score', 'scaled_dot') },
  { id: 'sigma', label: 'sigma', describe: (o) => String(o.sigma ?? 1), prompt: 'Width σ of the gaussian score (empty = 1)', validate: positiveNumber, word: keyValue('sigma') },
  { id: 'dtype', label: 'dtype', describe: (o) => o.dtype, choices: ['float64', 'float32'], word: keyValue('dtype') },
  { id: 'pe', label: 'positional encoding', describe: (o) => (o.sinusoidalPE ? 'sinusoidal' : 'none'), choices: ['none', 'sinusoidal'], word: (v) => (v === 'sinusoidal' ? 'pe=sinusoidal' : undefined) },
  { id: 'grad', label: 'gradients', describe: (o) => (o.gradients ? 'on' : 'off'), choices: ['on', 'off'], word: flag('grad') },
  { id: 'residual', label: 'residual', describe: (o) => (o.residual ? 'on' : 'off'), choices: ['on', 'off'], word: flag('residual') },
  {
    id: 'name',
    label: 'name',
    describe: (o) => o.name ?? '',
    prompt: 'A title for this problem',
    // Quotes inside the name would end it early (in JSON, the outer quotes become single ones).
    word: (value) => (value.trim() === '' ? undefined : `name="${value.trim().replace(/["']/g, '’')}"`),
  },
  // The variants (docs/options.md, "Variants of today's models").
  { id: 'rope', label: 'rope (rotary positions)', describe: (o) => (o.rope === undefined ? 'off' : `base ${o.rope}`), prompt: 'RoPE base (on = 10000; empty or off removes RoPE)', validate: ropeBase, word: ropeWord },
  { id: 'rope_layout', label: 'rope_layout', describe: (o) => o.ropeLayout ?? 'half', choices: ['half', 'interleaved'], word: keyValue('rope_layout', 'half') },
  { id: 'temperature', label: 'temperature', describe: (o) => String(o.temperature ?? 1), prompt: 'Divides the scaled scores (empty = 1)', validate: positiveNumber, word: keyValue('temperature', '1') },
  { id: 'softcap', label: 'softcap', describe: (o) => (o.softcap === undefined ? 'off' : String(o.softcap)), prompt: 'Logit softcap C: s → C·tanh(s/C) (empty removes it)', validate: positiveNumber, word: keyValue('softcap') },
  { id: 'alibi', label: 'alibi', describe: (o) => (o.alibi ? 'on' : 'off'), choices: ['on', 'off'], word: flag('alibi') },
  { id: 'window', label: 'window (sliding)', describe: (o) => (o.window === undefined ? 'off' : String(o.window)), prompt: 'Keys each query sees around itself (with causal: the W up to itself; empty removes it)', validate: positiveInteger, word: keyValue('window') },
  { id: 'prefix', label: 'prefix (prefix-LM)', describe: (o) => (o.prefix === undefined ? 'off' : String(o.prefix)), prompt: 'Positions visible to every query; the rest is causal (empty removes it)', validate: positiveInteger, word: keyValue('prefix') },
  { id: 'sinks', label: 'sinks (attention sinks)', describe: (o) => (o.sinks === undefined ? 'off' : String(o.sinks)), prompt: 'First keys kept visible past the window (empty removes them)', validate: positiveInteger, word: keyValue('sinks') },
  { id: 'decode', label: 'decode (one KV-cache step)', describe: (o) => (o.decode ? 'on' : 'off'), choices: ['on', 'off'], word: flag('decode') },
];

/** Asks (unless `args` says) which option and value, then edits the directive of `problem`. */
export async function setOption(editor: vscode.TextEditor, problem: Problem, args?: SetOptionArgs): Promise<boolean> {
  const chosen = args ?? (await ask(problem.options));
  if (!chosen) return false;
  const spec = OPTIONS.find((option) => option.id === chosen.option);
  if (!spec) throw new Error(`Unknown attention option "${chosen.option}".`);
  const invalid = spec.validate?.(chosen.value);
  if (invalid) throw new Error(`${spec.label}: ${invalid}`);
  return writeDirectiveWord(editor, problem, spec.id, spec.word(chosen.value));
}

async function ask(options: AttentionOptions): Promise<SetOptionArgs | undefined> {
  const picked = await vscode.window.showQuickPick(
    OPTIONS.map((option) => ({ label: option.label, description: option.describe(options), option })),
    { title: 'Attention: Set Options', placeHolder: 'Which option of this problem?' },
  );
  if (!picked) return undefined;
  const { option } = picked;
  const value = option.choices
    ? await vscode.window.showQuickPick(option.choices, { title: `Attention: ${option.label}`, placeHolder: `now ${option.describe(options)}` })
    : await vscode.window.showInputBox({ title: `Attention: ${option.label}`, prompt: option.prompt, value: option.describe(options), validateInput: option.validate });
  return value === undefined ? undefined : { option: option.id, value };
}

async function writeDirectiveWord(editor: vscode.TextEditor, problem: Problem, key: string, word: string | undefined): Promise<boolean> {
  const { document } = editor;
  if (problem.directiveRange) {
    const range = toVsRange(problem.directiveRange);
    // From the directive's own `attention:` (not an earlier one in prose) to the end of its line.
    const lines = new vscode.Range(range.start, new vscode.Position(range.end.line, document.lineAt(range.end.line).text.length));
    const before = document.getText(lines);
    if (!argumentSpan(before)) throw new Error(`Could not find the \`attention:\` directive of this problem on line ${range.start.line + 1}.`);
    const after = withDirectiveWord(before, key, word);
    return after === before || editor.edit((edit) => edit.replace(lines, after));
  }
  if (word === undefined) return true; // nothing to remove
  const line = directiveLine(document, word);
  if (line === undefined) return insertJsonDirective(editor, word);
  const start = toVsRange(problem.range).start.line;
  return editor.edit((edit) => edit.insert(new vscode.Position(start, 0), `${line}\n`));
}

/** JSON has no comments: the directive is the document's `"attention"` key, added first. */
async function insertJsonDirective(editor: vscode.TextEditor, word: string): Promise<boolean> {
  const brace = editor.document.getText().indexOf('{');
  if (brace === -1) throw new Error('This JSON document is not an object, so it cannot hold an "attention" key.');
  const entry = `"attention": "${word.replace(/"/g, "'")}", `;
  return editor.edit((edit) => edit.insert(editor.document.positionAt(brace + 1), entry));
}
