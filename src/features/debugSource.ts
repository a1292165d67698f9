// "Attention: Show Attention from Debug Variables": with a debug session paused, the variables in
// scope whose names give a role (q, k, v, x, W_Q…, as in files) are read from the program — one
// evaluate per array, in bulk — and run as a problem of their own, shown in the panel as a file's
// would be. A list of strings named `tokens` (`key_tokens`) labels the axes; a flat array (JS keeps
// matrices in flat typed arrays) is read in the shape the others fix (core/debug/reshape.ts), or
// the user picks one its length allows. While the panel shows it, each new stop (or frame picked in the Call Stack) reads the
// same variables again. See debugAdapter.ts for what is asked of the debugger.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeExpression, labelsExpression, languageOf, type DebugLanguage } from '../core/debug/expressions';
import { bytesOf, decodeLabels, parseDescriptions, shapeText, unreadableReason, type ArrayRead } from '../core/debug/payload';
import { labelsOfName, matchRoles, mayStackHeads, problemOfArrays, roleOfName, roleText, type RoleOf, type ScopeVariable } from '../core/debug/problem';
import { reshapeFlat, shapeChoices, type ShapedArray } from '../core/debug/reshape';
import { formatBytes } from '../core/words';
import { buildSpec } from '../core/spec';
import type { DType, Problem } from '../core/types';
import type { PanelApi } from '../panel';
import { COMMANDS } from '../host/commandIds';
import { DebugReadError, evaluate, pausedFrame, readArray, variablesInScope, type PausedFrame } from './debugAdapter';
import { debugSessionUri, isDebugUri } from '../host/debugUri';
import type { Results } from '../host/results';
import type { RunOutcome, Runner } from './runner';

const LABELS_TEXT = { tokens: 'token labels (the axes)', keyTokens: 'key token labels (the key axis)' };

/** Arrays above this many elements (a 1024×1024 matrix) are read only after the user agrees. */
export const LARGE_ELEMENTS = 1024 * 1024;

/** Arguments for callers without pickers (tests, other commands); the Variables view passes its own. */
export interface DebugAttentionArgs {
  /** Names of variables in scope to read; their roles come from their names unless given in `roles`. */
  variables?: string[];
  /** Role (as a name the reader knows: `X`, `W_Q`, `mask`…) of a variable whose name gives none. */
  roles?: Record<string, string>;
  /** Read arrays above LARGE_ELEMENTS without asking. */
  readLarge?: boolean;
}

/** What the Variables view's context menu passes. */
interface VariablesViewArgs {
  sessionId?: string;
  variable: { name: string; evaluateName?: string };
}

export interface DebugAttentionOutcome {
  uri?: string;
  outcome?: RunOutcome;
  /** Why nothing was shown (also shown to the user). */
  error?: string;
  /** Milliseconds from the first evaluate to the last array decoded. */
  readMs?: number;
  /** How arrays were read (a flat one in the shape the others fix), as the panel states it. */
  notes?: string[];
}

interface Chosen extends RoleOf {
  name: string;
  expression: string;
}

/** A list of strings read as axis labels. */
interface ChosenLabels {
  name: string;
  expression: string;
  labels: 'tokens' | 'keyTokens';
}

/** What is read from the program: arrays under roles, and labels. */
interface Choice {
  arrays: Chosen[];
  labels: ChosenLabels[];
}

/** What the panel follows: which variables of which session, read again at each stop. */
interface Followed {
  session: vscode.DebugSession;
  uri: vscode.Uri;
  chosen: Choice;
  /** Largest size the user agreed to read, per variable. */
  agreedBytes: Map<string, number>;
  dtype?: DType;
}

interface Deps {
  runner: Runner;
  results: Results;
  panel: PanelApi;
  log: vscode.LogOutputChannel;
}

export function registerDebugSource(context: vscode.ExtensionContext, deps: Deps): void {
  const source = new DebugSource(deps);
  context.subscriptions.push(
    vscode.commands.registerCommand(COMMANDS.showDebugAttention, (args?: DebugAttentionArgs | VariablesViewArgs) => source.command(args)),
    vscode.debug.onDidChangeActiveStackItem((item) => source.stackItemChanged(item)),
    vscode.debug.onDidTerminateDebugSession((session) => source.sessionEnded(session)),
    deps.panel.onDidRequestDtype(({ uri, dtype }) => {
      if (isDebugUri(uri)) void source.pickDType(uri, dtype);
    }),
  );
}

class DebugSource {
  private followed: Followed | undefined;
  /** Each read takes a number; a read finished after a newer one started is dropped. */
  private reads = 0;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly deps: Deps) {}

  async command(args?: DebugAttentionArgs | VariablesViewArgs): Promise<DebugAttentionOutcome> {
    try {
      // The paused frame's session: js-debug runs a program in a child of the session the user started.
      const session = vscode.debug.activeStackItem?.session ?? vscode.debug.activeDebugSession;
      if (!session) throw new DebugReadError('no debug session: start debugging and stop at a breakpoint first');
      const frame = await pausedFrame(session);
      const language = this.languageFor(session, frame);
      const given = args && 'variables' in args && Array.isArray(args.variables) ? (args as DebugAttentionArgs) : undefined;
      const clicked = args && 'variable' in args ? (args as VariablesViewArgs).variable : undefined;
      const chosen = given ? await this.given(session, frame, given) : await this.pick(session, frame, language, clicked);
      if (!chosen) return {};
      const followed: Followed = { session, uri: debugSessionUri(session), chosen, agreedBytes: new Map() };
      const read = await this.read(followed, frame, language, { interactive: !given, readLarge: given?.readLarge ?? false });
      if (!read) return {};
      this.followed = followed;
      this.deps.panel.show(followed.uri, 0);
      return { uri: followed.uri.toString(), outcome: read.outcome, readMs: read.readMs, notes: read.notes };
    } catch (error) {
      const message = error instanceof DebugReadError ? error.message : `reading from the debugger failed: ${error instanceof Error ? error.message : String(error)}`;
      this.deps.log.warn(message);
      void vscode.window.showErrorMessage(`Attention: ${message}`);
      return { error: message };
    }
  }

  stackItemChanged(item: vscode.DebugThread | vscode.DebugStackFrame | undefined): void {
    const followed = this.followed;
    if (!(item instanceof vscode.DebugStackFrame) || !followed || item.session.id !== followed.session.id) return;
    if (this.deps.panel.shownUri()?.toString() !== followed.uri.toString()) return;
    // One stop moves the selection more than once (thread, then frame): read once it settles.
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refresh(followed), 50);
  }

  sessionEnded(session: vscode.DebugSession): void {
    if (this.followed?.session.id === session.id) this.followed = undefined;
  }

  async pickDType(uri: vscode.Uri, dtype: DType): Promise<void> {
    const followed = this.followed;
    if (!followed || followed.uri.toString() !== uri.toString()) return;
    followed.dtype = dtype;
    const run = this.deps.results.get(uri.toString())?.runs[0];
    const spec = run && buildSpec(run.problem).spec;
    if (run && spec) await this.deps.runner.runDetached(uri.toString(), run.problem, spec, run.problem.name ?? 'debug variables', dtype);
  }

  private async refresh(followed: Followed): Promise<void> {
    try {
      const frame = await pausedFrame(followed.session);
      await this.read(followed, frame, this.languageFor(followed.session, frame), { interactive: true, readLarge: false });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log.warn(`Attention: reading the debug variables again failed: ${message}`);
      this.storeMessage(followed, `Attention: ${message}`);
    }
  }

  private languageFor(session: vscode.DebugSession, frame: PausedFrame): DebugLanguage {
    const language = languageOf(session.type, frame.sourcePath);
    if (!language) {
      throw new DebugReadError(`reading arrays from a "${session.type}" debug session is not supported: Python (debugpy) and JavaScript/TypeScript (js-debug) are`);
    }
    return language;
  }

  /** Variables named by the caller, each checked to be in scope. */
  private async given(session: vscode.DebugSession, frame: PausedFrame, args: DebugAttentionArgs): Promise<Choice> {
    const inScope = await this.scopeVariables(session, frame);
    const choice: Choice = { arrays: [], labels: [] };
    for (const name of args.variables ?? []) {
      const variable = inScope.find((candidate) => candidate.name === name);
      if (!variable) throw new DebugReadError(`${name} is not a variable in scope of ${frame.name}`);
      const roleName = args.roles?.[name] ?? name;
      const labels = labelsOfName(roleName);
      const role = roleOfName(roleName);
      if (labels) choice.labels.push({ name, expression: variable.expression, labels });
      else if (role) choice.arrays.push({ name, expression: variable.expression, ...role });
      else throw new DebugReadError(`${roleName} is not a role Attention Lens knows (X, Q, K, V, W_Q, W_K, W_V, W_O, attn_weights, mask, tokens…)`);
    }
    return choice;
  }

  /**
   * The user confirms the variables matched by name, or picks others (and their roles). A name
   * with a role whose value is no array (a module named `attn`, say) is offered but not picked:
   * one describe of the matched names (the read's own first, side-effect-free step) tells.
   */
  private async pick(session: vscode.DebugSession, frame: PausedFrame, language: DebugLanguage, clicked?: { name: string; evaluateName?: string }): Promise<Choice | undefined> {
    const inScope = await this.scopeVariables(session, frame);
    // Every name with a role is described, before one per role is picked: `attn` (a module) must not hide `attn_weights`.
    const named = inScope.flatMap((variable) => {
      const role = roleOfName(variable.name);
      return role ? [{ ...variable, ...role }] : [];
    });
    const notArrays = await this.notArrays(session, frame, language, named);
    const matched = new Set(matchRoles(named.filter((variable) => !notArrays.has(variable.name))).map((variable) => variable.name));
    if (clicked) matched.add(clicked.name);
    const items = inScope.map((variable) => {
      const role = roleOfName(variable.name);
      const labels = labelsOfName(variable.name);
      const why = notArrays.get(variable.name);
      return {
        label: variable.name,
        description: labels ? LABELS_TEXT[labels] : role ? `${roleText(role)}${why ? ` — not picked: ${why}` : ''}` : 'no role: you will be asked',
        detail: `${variable.scope}: ${variable.value.length > 80 ? `${variable.value.slice(0, 80)}…` : variable.value}`,
        picked: matched.has(variable.name) || labels !== undefined,
        variable,
        role,
        labels,
      };
    });
    if (items.length === 0) throw new DebugReadError(`no variables in scope of ${frame.name}`);
    const picked = await vscode.window.showQuickPick(items, {
      title: `Attention: variables of ${frame.name} to read`,
      placeHolder: 'X with W_Q, W_K, W_V — or Q, K, V directly — and attn_weights to compare (names as in files; pick others and give their roles)',
      canPickMany: true,
      matchOnDescription: true,
    });
    if (!picked || picked.length === 0) return undefined;
    const choice: Choice = { arrays: [], labels: [] };
    for (const item of picked) {
      const { name, expression } = item.variable;
      if (item.labels) {
        choice.labels.push({ name, expression, labels: item.labels });
        continue;
      }
      const role = item.role ?? (await this.askRole(name));
      if (!role) return undefined;
      choice.arrays.push({ name, expression, ...role });
    }
    return choice;
  }

  /** Of the variables matched by name, those that cannot be read as arrays, with why; none when the describe itself fails. */
  private async notArrays(session: vscode.DebugSession, frame: PausedFrame, language: DebugLanguage, candidates: readonly (ScopeVariable & RoleOf)[]): Promise<Map<string, string>> {
    const why = new Map<string, string>();
    if (candidates.length === 0) return why;
    try {
      const descriptions = parseDescriptions(await evaluate(session, frame.frameId, describeExpression(language, candidates.map((c) => c.expression)), 'describe the variables'), candidates.length);
      if (typeof descriptions === 'string') return why;
      candidates.forEach((candidate, i) => {
        const reason = unreadableReason(candidate.name, descriptions[i], mayStackHeads(candidate));
        if (reason) why.set(candidate.name, reason);
      });
    } catch {
      // The read says what is wrong, once the user has picked.
    }
    return why;
  }

  private async askRole(name: string): Promise<RoleOf | undefined> {
    const roles = ['X', 'Q', 'K', 'V', 'W_Q', 'W_K', 'W_V', 'W_O', 'attn_weights', 'mask', 'context', 'PE', 'padding'];
    const picked = await vscode.window.showQuickPick(roles, { title: `Attention: what is ${name}?`, placeHolder: `The role of ${name} in attention` });
    return picked ? roleOfName(picked) : undefined;
  }

  private async scopeVariables(session: vscode.DebugSession, frame: PausedFrame): Promise<(ScopeVariable & { value: string })[]> {
    const seen = new Set<string>();
    const variables: (ScopeVariable & { value: string })[] = [];
    for (const variable of await variablesInScope(session, frame.frameId)) {
      if (seen.has(variable.name)) continue; // an inner scope hides an outer one
      seen.add(variable.name);
      variables.push({ name: variable.name, expression: variable.evaluateName ?? variable.name, scope: variable.scope, value: variable.value });
    }
    return variables;
  }

  /**
   * Reads the chosen variables in this frame (a describe first, then one evaluate per array),
   * runs them and stores the run. Undefined when the user declined a large read or a newer read
   * superseded this one.
   */
  private async read(followed: Followed, frame: PausedFrame, language: DebugLanguage, how: { interactive: boolean; readLarge: boolean }): Promise<{ outcome: RunOutcome; readMs: number; notes: string[] } | undefined> {
    const ticket = ++this.reads;
    const { session } = followed;
    const chosen = followed.chosen.arrays;
    const started = performance.now();
    const title = `${frame.name} (${path.basename(frame.sourcePath ?? frame.sourceName ?? '?')}:${frame.line})`;
    const names = chosen.map((c) => c.name).join(', ');
    const descriptions = parseDescriptions(
      await evaluate(session, frame.frameId, describeExpression(language, chosen.map((c) => c.expression)), `read ${names}`),
      chosen.length,
    );
    if (typeof descriptions === 'string') throw new DebugReadError(`cannot read ${names} in ${title}: ${descriptions}`);
    chosen.forEach((variable, i) => {
      const reason = unreadableReason(variable.name, descriptions[i], mayStackHeads(variable));
      if (reason) throw new DebugReadError(reason);
    });
    const large = chosen
      .map((variable, i) => ({ variable, description: descriptions[i], bytes: bytesOf(descriptions[i]) }))
      .filter(({ variable, description, bytes }) => description.shape.reduce((a, b) => a * b, 1) > LARGE_ELEMENTS && bytes > (followed.agreedBytes.get(variable.name) ?? 0));
    if (large.length > 0 && !how.readLarge) {
      if (!how.interactive) throw new DebugReadError(`${large.map(({ variable }) => variable.name).join(', ')} ${large.length === 1 ? 'is' : 'are'} larger than ${LARGE_ELEMENTS.toLocaleString('en-US')} numbers: pass readLarge to read ${large.length === 1 ? 'it' : 'them'}`);
      const sizes = large.map(({ variable, description, bytes }) => `${variable.name} (${shapeText(description.shape)}, ${formatBytes(bytes)})`).join(', ');
      const answer = await vscode.window.showWarningMessage(`Attention: ${sizes} ${large.length === 1 ? 'is' : 'are'} large; reading takes a while and holds a copy in the editor.`, { modal: true }, 'Read');
      if (answer !== 'Read') {
        this.deps.log.info(`not read in ${title}: ${sizes}, declined`);
        return undefined;
      }
    }
    for (const { variable, bytes } of large) followed.agreedBytes.set(variable.name, bytes);

    const arrays: (Chosen & { read: ArrayRead })[] = [];
    for (const [i, variable] of chosen.entries()) {
      const read = await readArray(session, frame.frameId, language, { name: variable.name, expression: variable.expression, stacked: mayStackHeads(variable) }, descriptions[i]);
      if (typeof read === 'string') throw new DebugReadError(read);
      arrays.push({ ...variable, read });
    }
    const labels: { tokens?: string[]; keyTokens?: string[] } = {};
    for (const variable of followed.chosen.labels) {
      const read = decodeLabels(await evaluate(session, frame.frameId, labelsExpression(language, variable.expression), `read ${variable.name}`), variable.name);
      if (typeof read === 'string') throw new DebugReadError(read);
      labels[variable.labels] = read;
    }
    const readMs = performance.now() - started;
    if (ticket !== this.reads) return undefined;

    const shaped = await this.shape(arrays.map((array, i) => ({ ...array, matrix: array.read.matrix, flat: descriptions[i].shape.length === 1 })), how.interactive);
    if (!shaped) return undefined;
    const problem = problemOfArrays(
      title,
      arrays.map((array, i) => ({ ...array, read: { ...array.read, matrix: shaped.arrays[i].matrix } })),
      labels,
    );
    const { spec, diagnostics } = buildSpec(problem);
    const error = diagnostics.find((diagnostic) => diagnostic.severity === 'error');
    if (!spec || error) throw new DebugReadError(error?.message ?? 'these variables do not make an attention problem: give X with W_Q, W_K, W_V, or Q, K and V');
    const read = arrays.map((a) => `${a.name} as ${roleText(a)} ${a.read.matrix.rows}×${a.read.matrix.cols}`).join(', ');
    this.deps.log.info(`read ${read} from ${title} in ${readMs.toFixed(0)} ms`);
    for (const note of shaped.notes) this.deps.log.info(note);
    const outcome = await this.deps.runner.runDetached(followed.uri.toString(), problem, spec, title, followed.dtype, shaped.notes);
    if (outcome.failures[0]) void vscode.window.showErrorMessage(`Attention: ${outcome.failures[0].error}`);
    return { outcome, readMs, notes: shaped.notes };
  }

  /**
   * The arrays with the flat ones in the shape the others fix; one that nothing fixes is read in
   * the shape the user picks from those its length allows (not interactive: an error naming them).
   * Undefined when the user dismissed the pick.
   */
  private async shape(arrays: ShapedArray[], interactive: boolean): Promise<{ arrays: ShapedArray[]; notes: string[] } | undefined> {
    let reshaped = reshapeFlat(arrays);
    const notes = [...reshaped.notes];
    while (reshaped.undecided.length > 0) {
      const array = reshaped.undecided[0];
      const length = array.matrix.data.length;
      const choices = shapeChoices(length).map(({ rows, cols }) => ({ label: `${rows}×${cols}`, rows, cols }));
      if (!interactive) throw new DebugReadError(`${array.name} holds ${length} values in one axis and nothing fixes its shape: read it as one of ${choices.map((c) => c.label).join(', ')}`);
      const picked = await vscode.window.showQuickPick(choices, { title: `Attention: ${array.name} holds ${length} values — read as rows × columns (row-major)`, placeHolder: 'Nothing else in the problem fixes its shape' });
      if (!picked) return undefined;
      notes.push(`${array.name}: ${length} values read as ${picked.label} (row-major), as picked`);
      const arraysNow = reshaped.arrays.map((other) => (other.name === array.name ? { ...other, matrix: { ...other.matrix, rows: picked.rows, cols: picked.cols }, flat: false } : other));
      reshaped = reshapeFlat(arraysNow);
      notes.push(...reshaped.notes);
    }
    return { arrays: reshaped.arrays, notes };
  }

  /** Shows a message in the panel in place of the previous read's result. */
  private storeMessage(followed: Followed, message: string): void {
    const key = followed.uri.toString();
    const previous = this.deps.results.get(key);
    const problem: Problem = previous?.parse.problems[0] ?? problemOfArrays(followed.session.name, []);
    const version = (previous?.version ?? 0) + 1;
    this.deps.results.set({ uri: key, version, parse: { problems: [problem], diagnostics: [] }, runs: [{ problem, version, error: message, elapsedMs: 0 }] });
  }
}
