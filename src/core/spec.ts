// Problem → AttentionSpec: every shape and option checked before anything is computed, each
// mismatch reported once, at the matrix that disagrees, naming both matrices and their shapes
// (`X is 3×4 but W_Q has 5 rows`). A spec returned here is one the engine can compute.
import { quantity } from './words';
import { roleLabel } from './parse/names';
import type { AttentionOptions, AttentionSpec, Diagnostic, Matrix, MatrixDef, Problem, Range, Role, Severity } from './types';

export interface SpecResult {
  spec?: AttentionSpec;
  diagnostics: Diagnostic[];
}

const shape = (m: Matrix): string => `${m.rows}×${m.cols}`;
/** `1 row`, `3 rows`. */

/** Collects diagnostics; `errors` counts the ones that stop the run. */
class Report {
  readonly diagnostics: Diagnostic[] = [];
  errors = 0;

  constructor(private readonly fallback: Range) {}

  add(range: Range | undefined, severity: Severity, code: string, message: string, suggestion?: string): void {
    if (severity === 'error') this.errors++;
    this.diagnostics.push({ range: range ?? this.fallback, severity, code, message, ...(suggestion ? { suggestion } : {}) });
  }

  error(range: Range | undefined, code: string, message: string, suggestion?: string): void {
    this.add(range, 'error', code, message, suggestion);
  }
}

/** The matrices of a problem by role: whole ones, and per-head ones indexed by head. */
class Inputs {
  private readonly whole = new Map<Role, MatrixDef>();
  private readonly perHead = new Map<Role, MatrixDef[]>();

  constructor(problem: Problem) {
    for (const def of problem.matrices) {
      if (!def.role) continue;
      if (def.head === undefined) {
        if (!this.whole.has(def.role)) this.whole.set(def.role, def);
      } else {
        const list = this.perHead.get(def.role) ?? [];
        if (!list[def.head]) list[def.head] = def;
        this.perHead.set(def.role, list);
      }
    }
  }

  get(role: Role): MatrixDef | undefined {
    return this.whole.get(role);
  }

  heads(role: Role): MatrixDef[] | undefined {
    return this.perHead.get(role);
  }

  has(role: Role): boolean {
    return this.whole.has(role) || this.perHead.has(role);
  }
}

/** Divisors of n, for suggesting head counts. */
function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

function listOr(values: number[]): string {
  return values.length <= 1 ? String(values[0] ?? '') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

export function buildSpec(problem: Problem): SpecResult {
  // A whole-model run has no matrices to check: the model's own folder is read when it runs.
  if (problem.model) return { diagnostics: [] };
  const where = problem.directiveRange ?? problem.matrices[0]?.nameRange ?? problem.range;
  const report = new Report(where);
  const unreadable = problem.unreadable?.[0];
  if (unreadable) {
    // Its error is already at the definition; checking the rest would only report it missing.
    report.add(unreadable.range, 'info', 'waiting-for-matrix', `This problem runs once ${unreadable.name} reads cleanly.`);
    return { diagnostics: report.diagnostics };
  }
  const reference = problem.references?.[0];
  if (reference) {
    // Read by core/parse/tensors/resolve first; until then its role would only be reported missing.
    report.add(reference.range, 'info', 'waiting-for-tensor', `This problem runs once ${reference.file} is read.`);
    return { diagnostics: report.diagnostics };
  }
  const inputs = new Inputs(problem);
  const options: AttentionOptions = { ...problem.options };
  const spec: AttentionSpec = { options };

  const X = inputs.get('X');
  const context = inputs.get('context');
  if (X) spec.X = X.value;
  if (context) spec.context = context.value;
  for (const role of ['Q', 'K', 'V'] as const) {
    const def = inputs.get(role);
    if (def) spec[role] = def.value;
  }

  resolveHeads(inputs, options, report, where);
  if (report.errors > 0) return { diagnostics: report.diagnostics };

  if (!X && !spec.Q && inputs.has('weights')) return weightsOnly(problem, inputs, spec, report);
  if (!X && !spec.Q) {
    report.error(where, 'missing-input', 'Nothing to attend over: write the input X (one row per token), or Q, K and V directly.', 'add e.g. X = [[1, 0], [0, 1]]');
    return { diagnostics: report.diagnostics };
  }
  checkPositions(inputs, spec, options, report);
  const streams = checkProjections(inputs, spec, options, report);
  if (report.errors > 0 || !streams) return { diagnostics: report.diagnostics };

  checkScores(inputs, spec, options, streams, report);
  checkMasks(inputs, spec, streams, report);
  checkWeights(inputs, spec, streams, report);
  checkVariants(inputs, spec, options, streams, report, (key) => problem.optionRanges?.[key] ?? where);
  checkOutput(inputs, spec, options, streams, report, where);
  checkTokens(problem, spec, streams, report, where);
  checkFinite(problem, report);
  if (report.errors > 0) return { diagnostics: report.diagnostics };
  if (problem.tokens) spec.tokens = problem.tokens;
  if (problem.keyTokens) spec.keyTokens = problem.keyTokens;
  return { spec, diagnostics: report.diagnostics };
}

/** heads / kv_heads from the directive and from per-head matrices; they must agree. */
function resolveHeads(inputs: Inputs, options: AttentionOptions, report: Report, where: Range): void {
  const counted = (role: Role): number | undefined => {
    const list = inputs.heads(role);
    if (!list) return undefined;
    const label = roleLabel(role);
    const missing = [...list.keys()].filter((head) => !list[head]).map((head) => head + 1);
    if (missing.length > 0) {
      const first = list.find(Boolean);
      report.error(first?.nameRange, 'missing-head', `${label} is given per head but head ${listOr(missing)} is missing.`, `write ${label}${missing[0]} = …`);
    }
    if (inputs.get(role)) {
      report.error(inputs.get(role)?.nameRange, 'mixed-heads', `${label} is given both whole and per head; use one or the other.`);
    }
    return list.length;
  };
  for (const [key, count] of [['heads', options.heads], ['kv_heads', options.kvHeads]] as const) {
    if (count !== undefined && !(Number.isInteger(count) && count >= 1)) {
      report.error(where, 'bad-option-value', `${key}=${count} is not a number of heads: use a whole number from 1.`);
      return;
    }
  }
  const queryHeads = counted('WQ');
  const keyHeads = counted('WK');
  const valueHeads = counted('WV');
  if (queryHeads !== undefined) {
    if (options.heads === 1) options.heads = queryHeads;
    else if (options.heads !== queryHeads) {
      report.error(where, 'head-count', `heads=${options.heads} but W_Q is given for ${queryHeads} heads.`, `use heads=${queryHeads}`);
    }
  }
  if (options.kvHeads === undefined && keyHeads !== undefined && keyHeads !== options.heads) options.kvHeads = keyHeads;
  const kvHeads = options.kvHeads ?? options.heads;
  if (options.heads % kvHeads !== 0 || kvHeads > options.heads) {
    report.error(
      where,
      'kv-heads',
      `kv_heads=${kvHeads} does not divide heads=${options.heads}: every key/value head must serve the same number of query heads.`,
      `use kv_heads=${listOr(divisors(options.heads))}`,
    );
  }
  const weightHeads = counted('weights');
  if (weightHeads !== undefined) {
    if (options.heads === 1 && queryHeads === undefined) options.heads = weightHeads;
    else if (options.heads !== weightHeads) {
      const first = inputs.heads('weights')?.find(Boolean);
      report.error(first?.nameRange ?? where, 'head-count', `There are ${quantity(options.heads, 'head')} but ${first?.name ?? 'attn_weights'} and its siblings give weights for ${weightHeads}.`, `give one weight matrix per head, or use heads=${weightHeads}`);
    }
  }
  for (const [label, count] of [['W_K', keyHeads], ['W_V', valueHeads]] as const) {
    if (count !== undefined && count !== kvHeads) {
      report.error(where, 'head-count', `${label} is given for ${count} heads but there are ${kvHeads} key/value heads.`, `use kv_heads=${count}`);
    }
  }
}

function checkPositions(inputs: Inputs, spec: AttentionSpec, options: AttentionOptions, report: Report): void {
  const PE = inputs.get('PE');
  if (!PE) return;
  if (!spec.X) {
    report.add(PE.nameRange, 'warning', 'unused-matrix', 'PE is added to X, but there is no X here: it is not used.');
    return;
  }
  if (PE.value.rows !== spec.X.rows || PE.value.cols !== spec.X.cols) {
    report.error(PE.nameRange, 'shape-mismatch', `X is ${shape(spec.X)} but PE is ${shape(PE.value)}: PE is added to X, so they need the same shape.`);
    return;
  }
  if (options.sinusoidalPE) report.add(PE.nameRange, 'info', 'pe-given', 'PE is given, so it is used instead of the sinusoidal encoding.');
  spec.PE = PE.value;
}

/** Per-head widths and lengths of the three streams, once their matrices fit together. */
interface Streams {
  queries: number;
  keys: number;
  queryWidth: number;
  keyWidth: number;
  valueWidth: number;
}

/**
 * Q, K and V: each precomputed, or projected from its source (X, or the context for K/V) by a
 * whole W split across heads or one W per head.
 */
function checkProjections(inputs: Inputs, spec: AttentionSpec, options: AttentionOptions, report: Report): Streams | undefined {
  const h = options.heads;
  const g = options.kvHeads ?? h;
  const xDef = inputs.get('X');
  const contextDef = inputs.get('context');
  const kvSource = contextDef ?? xDef;
  const projected = (['WQ', 'WK', 'WV'] as const).filter((role) => inputs.has(role));
  if (xDef && projected.length === 0 && !spec.Q && !spec.K && !spec.V) {
    report.add(xDef.nameRange, 'info', 'identity-projections', 'No W_Q, W_K or W_V: attention runs on X itself (Q = K = V = X).', 'add W_Q, W_K and W_V to project X');
  } else if (xDef) {
    for (const role of ['WQ', 'WK', 'WV'] as const) {
      const stream = role[1] as 'Q' | 'K' | 'V';
      if (!inputs.has(role) && !spec[stream]) {
        const source = role === 'WQ' ? 'X' : kvSource === contextDef ? 'the context' : 'X';
        report.error(
          xDef.nameRange,
          'missing-matrix',
          `${roleLabel(role)} is missing: ${projected.map(roleLabel).join(' and ')} ${projected.length === 1 ? 'is' : 'are'} given, so ${stream} must be projected from ${source} too.`,
          `add ${roleLabel(role)} = … (${source === 'X' ? 'd_model' : 'context width'} rows)`,
        );
      }
    }
  }
  const stream = (role: 'WQ' | 'WK' | 'WV', count: number, sourceDef: MatrixDef | undefined): { rows: number; width: number } | undefined => {
    const name = role[1] as 'Q' | 'K' | 'V';
    const given = inputs.get(name);
    if (given) {
      if (given.value.cols % count !== 0) {
        report.error(given.nameRange, 'heads-not-dividing', `${name} has ${quantity(given.value.cols, 'column')}, which ${count} heads cannot share equally.`, `use ${count === h ? 'heads' : 'kv_heads'}=${listOr(divisors(given.value.cols))}`);
        return undefined;
      }
      return { rows: given.value.rows, width: given.value.cols / count };
    }
    if (!sourceDef) {
      report.error(undefined, 'missing-input', `${name} has nothing to come from: give ${name} itself, or X and ${roleLabel(role)}.`);
      return undefined;
    }
    const source = sourceDef.value;
    const label = roleLabel(role);
    const perHead = inputs.heads(role);
    const whole = inputs.get(role);
    if (!perHead && !whole) {
      // No projection: the heads are column blocks of the source itself.
      if (source.cols % count === 0) return { rows: source.rows, width: source.cols / count };
      report.error(sourceDef.nameRange, 'heads-not-dividing', `${count} heads cannot split ${sourceDef.name}'s ${quantity(source.cols, 'column')} evenly.`, `use ${count === h ? 'heads' : 'kv_heads'}=${listOr(divisors(source.cols))}`);
      return undefined;
    }
    const weights = perHead ?? [whole as MatrixDef];
    let ok = true;
    for (const w of weights) {
      if (w.value.rows !== source.cols) {
        report.error(w.nameRange, 'shape-mismatch', `${sourceDef.name} is ${shape(source)} but ${w.name} has ${quantity(w.value.rows, 'row')}: ${w.name} needs one row per column of ${sourceDef.name} (${source.cols}).`);
        ok = false;
      }
    }
    if (!ok) return undefined;
    if (perHead) {
      const first = perHead[0];
      const odd = perHead.find((w) => w.value.cols !== first.value.cols);
      if (odd) {
        report.error(odd.nameRange, 'shape-mismatch', `${odd.name} is ${shape(odd.value)} but ${first.name} is ${shape(first.value)}: every head's ${label} needs the same shape.`);
        return undefined;
      }
      if (perHead.length === count) {
        if (!spec[role]) spec[role] = perHead.map((w) => w.value);
        return { rows: source.rows, width: first.value.cols };
      }
      return undefined; // a head count mismatch, reported by resolveHeads
    }
    const w = (whole as MatrixDef).value;
    if (w.cols % count !== 0) {
      const what = count === h ? `heads=${count}` : `kv_heads=${count}`;
      const dModel = w.cols === source.cols ? ` (d_model=${w.cols})` : '';
      report.error(
        (whole as MatrixDef).nameRange,
        'heads-not-dividing',
        `${what} cannot split ${label}'s ${quantity(w.cols, 'column')}${dModel} evenly: each head takes the same number of columns.`,
        `use ${count === h ? 'heads' : 'kv_heads'}=${listOr(divisors(w.cols))}`,
      );
      return undefined;
    }
    spec[role] = [w];
    return { rows: source.rows, width: w.cols / count };
  };
  const q = stream('WQ', h, xDef);
  const k = stream('WK', g, kvSource);
  const v = stream('WV', g, kvSource);
  if (!q || !k || !v) return undefined;
  if (k.rows !== v.rows) {
    const kDef = inputs.get('K');
    const vDef = inputs.get('V');
    report.error(vDef?.nameRange ?? kDef?.nameRange, 'shape-mismatch', `K has ${quantity(k.rows, 'row')} but V has ${v.rows}: every key needs a value.`);
    return undefined;
  }
  return { queries: q.rows, keys: k.rows, queryWidth: q.width, keyWidth: k.width, valueWidth: v.width };
}

function checkScores(inputs: Inputs, spec: AttentionSpec, options: AttentionOptions, streams: Streams, report: Report): void {
  const { queryWidth: dq, keyWidth: dk } = streams;
  const needs: Record<string, Role[]> = { general: ['Wa'], additive: ['W1', 'W2', 'va'] };
  const used = needs[options.score] ?? [];
  for (const role of ['Wa', 'W1', 'W2', 'va'] as const) {
    const def = inputs.get(role);
    if (def && !used.includes(role)) {
      const score = role === 'Wa' ? 'general' : 'additive';
      report.add(def.nameRange, 'warning', 'unused-matrix', `${def.name} is only used by score=${score}; this problem uses score=${options.score}.`, `add score=${score} to the directive`);
    }
  }
  if (options.score === 'scaled_dot' || options.score === 'dot' || options.score === 'gaussian') {
    if (dq !== dk) {
      report.error(inputs.get('WK')?.nameRange ?? inputs.get('K')?.nameRange, 'shape-mismatch', `Each head's queries have ${quantity(dq, 'column')} but its keys have ${dk}: score=${options.score} compares them entry by entry, so W_Q and W_K need the same number of columns per head.`);
    }
    return;
  }
  const missing = used.filter((role) => !inputs.get(role));
  if (missing.length > 0) {
    const shapes: Record<string, string> = { Wa: `${dq}×${dk}`, W1: `${dq}×d_a`, W2: `${dk}×d_a`, va: 'd_a entries' };
    report.error(
      undefined,
      'missing-score-matrix',
      `score=${options.score} needs ${missing.map((role) => `${roleLabel(role)} (${shapes[role]})`).join(', ')}.`,
      options.score === 'general' ? `add W_a = … (${dq}×${dk})` : 'add W_1, W_2 and v_a',
    );
    return;
  }
  if (options.score === 'general') {
    const Wa = inputs.get('Wa') as MatrixDef;
    if (Wa.value.rows !== dq || Wa.value.cols !== dk) {
      report.error(Wa.nameRange, 'shape-mismatch', `${Wa.name} is ${shape(Wa.value)} but score=general needs ${dq}×${dk} (query width × key width per head).`);
    } else spec.Wa = Wa.value;
    return;
  }
  const [W1, W2, va] = (['W1', 'W2', 'va'] as const).map((role) => inputs.get(role) as MatrixDef);
  const da = W1.value.cols;
  const vaLength = va.value.rows === 1 ? va.value.cols : va.value.cols === 1 ? va.value.rows : -1;
  if (W1.value.rows !== dq) report.error(W1.nameRange, 'shape-mismatch', `Queries have ${quantity(dq, 'column')} per head but ${W1.name} has ${quantity(W1.value.rows, 'row')}.`);
  else if (W2.value.rows !== dk) report.error(W2.nameRange, 'shape-mismatch', `Keys have ${quantity(dk, 'column')} per head but ${W2.name} has ${quantity(W2.value.rows, 'row')}.`);
  else if (W2.value.cols !== da) report.error(W2.nameRange, 'shape-mismatch', `${W1.name} is ${shape(W1.value)} but ${W2.name} is ${shape(W2.value)}: both need ${quantity(da, 'column')} (the attention width d_a).`);
  else if (vaLength !== da) report.error(va.nameRange, 'shape-mismatch', `${va.name} is ${shape(va.value)} but needs ${da} entries (one per column of ${W1.name}).`);
  else {
    spec.W1 = W1.value;
    spec.W2 = W2.value;
    spec.va = va.value;
  }
}

function checkMasks(inputs: Inputs, spec: AttentionSpec, streams: Streams, report: Report): void {
  const { queries, keys } = streams;
  const mask = inputs.get('mask');
  if (mask) {
    const m = mask.value;
    if (m.rows === queries && m.cols === keys) spec.mask = { kind: mask.boolean ? 'boolean' : 'additive', value: m };
    else if (m.rows === 1 && m.cols === keys && queries > 1) {
      // One row for every query, as PyTorch broadcasting would.
      const data = new Float64Array(queries * keys);
      for (let i = 0; i < queries; i++) data.set(m.data, i * keys);
      spec.mask = { kind: mask.boolean ? 'boolean' : 'additive', value: { rows: queries, cols: keys, data } };
    } else {
      report.error(mask.nameRange, 'shape-mismatch', `${mask.name} is ${shape(m)} but the scores are ${queries}×${keys} (${queries} queries × ${keys} keys): the mask needs that shape.`);
    }
    if (spec.mask?.kind === 'additive' && m.data.every((x) => x === 0 || x === 1) && m.data.some((x) => x === 1)) {
      report.add(
        mask.nameRange,
        'warning',
        'numeric-mask',
        `${mask.name} holds only 0s and 1s, so it is added to the scores (a float mask, as in PyTorch) and blocks nothing.`,
        'to block positions write true/false (true = may attend) or 0/-inf',
      );
    }
  }
  const padding = inputs.get('padding');
  if (padding) {
    const p = padding.value;
    const length = p.rows === 1 ? p.cols : p.cols === 1 ? p.rows : -1;
    if (length !== keys) {
      report.error(padding.nameRange, 'shape-mismatch', `${padding.name} is ${shape(p)} but there are ${keys} keys: key padding needs one true/false per key.`);
    } else if (!p.data.every((x) => x === 0 || x === 1)) {
      report.error(padding.nameRange, 'bad-padding', `${padding.name} marks padded keys: write true (padded, ignored) or false for each key.`);
    } else spec.padding = { rows: 1, cols: keys, data: p.data };
  }
}

/** A row (1×n) or column (n×1) as a 1×n row; undefined for any other shape. */
function asRow(m: Matrix): Matrix | undefined {
  if (m.rows !== 1 && m.cols !== 1) return undefined;
  return { rows: 1, cols: m.rows * m.cols, data: m.data };
}

/** The variant options (engine/variants.ts) against the shapes they act on, each at its option. */
function checkVariants(inputs: Inputs, spec: AttentionSpec, options: AttentionOptions, streams: Streams, report: Report, at: (key: string) => Range): void {
  const { queries, keys, queryWidth, keyWidth } = streams;
  if (options.rope !== undefined) {
    const odd = [['queries', queryWidth], ['keys', keyWidth]].find(([, width]) => (width as number) % 2 !== 0);
    if (odd) {
      report.error(at('rope'), 'rope-odd-width', `RoPE turns pairs of columns, but each head's ${odd[0]} have ${quantity(odd[1] as number, 'column')} (an odd number).`, 'give every head an even width, or remove `rope`');
    }
  } else if (options.ropeLayout) {
    report.add(at('rope_layout'), 'warning', 'unused-option', '`rope_layout` only matters with `rope`.', 'add `rope` to the directive');
  }
  if (options.sinks !== undefined && options.window === undefined) {
    report.add(at('sinks'), 'warning', 'unused-option', '`sinks` keeps the first keys visible past a window, but there is no `window` here.', 'add e.g. `window=4`');
  }
  if (options.decode && options.gradients) {
    report.error(at('decode'), 'decode-gradients', '`decode` computes one query row (a KV-cache step); the backward pass needs the full run.', 'remove `decode` or `grad`');
  }
  const slopes = inputs.get('alibiSlopes');
  if (slopes && !options.alibi) {
    report.add(slopes.nameRange, 'warning', 'unused-matrix', `${slopes.name} gives ALiBi slopes, but \`alibi\` is not on.`, 'add `alibi` to the directive');
  } else if (slopes) {
    const row = asRow(slopes.value);
    if (!row || row.cols !== options.heads) {
      report.error(slopes.nameRange, 'shape-mismatch', `${slopes.name} is ${shape(slopes.value)} but there ${options.heads === 1 ? 'is 1 head' : `are ${options.heads} heads`}: ALiBi needs one slope per head.`);
    } else if (!row.data.every(Number.isFinite)) {
      report.error(slopes.nameRange, 'bad-slopes', `${slopes.name} holds a non-finite slope: every slope must be a number.`);
    } else spec.alibiSlopes = row;
  }
  const segments = inputs.get('segments');
  if (segments) {
    const row = asRow(segments.value);
    if (!row || row.cols !== keys) {
      report.error(segments.nameRange, 'shape-mismatch', `${segments.name} is ${shape(segments.value)} but there are ${quantity(keys, 'key')}: segments needs one document id per token.`);
    } else if (queries > keys) {
      report.error(segments.nameRange, 'segments-queries', `There are ${queries} queries but ${quantity(keys, 'key')}: a query's document is the id at its position, so there cannot be more queries than keys.`);
    } else if (!row.data.every(Number.isFinite)) {
      report.error(segments.nameRange, 'bad-segments', `${segments.name} holds a non-finite id: write one number per token.`);
    } else spec.segments = row;
  }
}

function checkOutput(inputs: Inputs, spec: AttentionSpec, options: AttentionOptions, streams: Streams, report: Report, where: Range): void {
  const concatWidth = streams.valueWidth * options.heads;
  const WO = inputs.get('WO');
  let outputWidth = concatWidth;
  if (WO) {
    if (WO.value.rows !== concatWidth) {
      const parts = options.heads > 1 ? `${options.heads} heads × ${quantity(streams.valueWidth, 'column')} = ${concatWidth}` : `${concatWidth}`;
      report.error(WO.nameRange, 'shape-mismatch', `Concat(heads) has ${parts} ${options.heads > 1 || concatWidth !== 1 ? 'columns' : 'column'} but ${WO.name} has ${quantity(WO.value.rows, 'row')}.`, `give ${WO.name} ${quantity(concatWidth, 'row')}`);
      return;
    }
    spec.WO = WO.value;
    outputWidth = WO.value.cols;
  }
  if (options.residual) {
    if (!spec.X) report.error(where, 'residual-needs-input', 'residual adds the output back to X, but there is no X here.', 'remove `residual` or give X');
    else if (spec.X.cols !== outputWidth || spec.X.rows !== streams.queries) {
      report.error(
        WO?.nameRange ?? where,
        'shape-mismatch',
        `residual adds the output (${streams.queries}×${outputWidth}) to X (${shape(spec.X)}): their shapes differ.`,
        WO ? `give ${WO.name} ${quantity(spec.X.cols, 'column')}` : `add W_O (${outputWidth}×${spec.X.cols}) or remove residual`,
      );
    }
  }
  const dO = inputs.get('dO');
  if (dO) {
    if (dO.value.rows !== streams.queries || dO.value.cols !== outputWidth) {
      report.error(dO.nameRange, 'shape-mismatch', `${dO.name} is ${shape(dO.value)} but the output is ${streams.queries}×${outputWidth}: the upstream gradient needs the output's shape.`);
    } else {
      spec.dO = dO.value;
      options.gradients = true; // writing dO asks for the backward pass
    }
  }
}

function checkTokens(problem: Problem, spec: AttentionSpec, streams: Streams, report: Report, where: Range): void {
  const crossAttention = Boolean(spec.context) || streams.queries !== streams.keys;
  if (problem.tokens && problem.tokens.length !== streams.queries) {
    report.add(where, 'warning', 'token-count', `There are ${problem.tokens.length} tokens but ${streams.queries} queries (rows of ${spec.X ? 'X' : 'Q'}): labels may not line up.`);
  }
  if (problem.keyTokens && problem.keyTokens.length !== streams.keys) {
    report.add(where, 'warning', 'token-count', `There are ${problem.keyTokens.length} key tokens but ${streams.keys} keys: labels may not line up.`);
  } else if (!problem.keyTokens && problem.tokens && crossAttention) {
    report.add(where, 'info', 'key-tokens', 'Keys come from another sequence here: add key_tokens = [...] to label them.');
  }
}

function checkFinite(problem: Problem, report: Report): void {
  for (const def of problem.matrices) {
    // Given weights are only compared: a NaN there (PyTorch's fully masked row) shows in the difference.
    if (!def.role || def.role === 'mask' || def.role === 'weights') continue;
    if (def.value.data.some((x) => !Number.isFinite(x))) {
      report.add(def.nameRange, 'warning', 'non-finite-input', `${def.name} contains Infinity or NaN: every result it reaches will be NaN or infinite.`);
    }
  }
}

/** The given weights, one per head (a whole matrix: one head). Undefined (reported) when they cannot be. */
function givenWeights(inputs: Inputs, heads: number, report: Report): MatrixDef[] | undefined {
  const perHead = inputs.heads('weights');
  const whole = inputs.get('weights');
  if (whole && !perHead && heads > 1) {
    report.error(
      whole.nameRange,
      'head-count',
      `${whole.name} is one ${shape(whole.value)} matrix but there are ${heads} heads: give the weights of each head (${whole.name}1 … ${whole.name}${heads}).`,
      `write ${whole.name}1 = …`,
    );
    return undefined;
  }
  const defs = perHead ?? (whole ? [whole] : []);
  return defs.length > 0 && defs.every(Boolean) ? defs : undefined;
}

/** Weights given beside Q and K (or X and the projections): each head's must be queries × keys, to be compared. */
function checkWeights(inputs: Inputs, spec: AttentionSpec, streams: Streams, report: Report): void {
  if (!inputs.has('weights')) return;
  const defs = givenWeights(inputs, spec.options.heads, report);
  if (!defs) return;
  const rows = spec.options.decode ? 1 : streams.queries;
  const what = spec.options.decode ? '1 query (decode) × keys' : 'queries × keys';
  let ok = true;
  for (const def of defs) {
    if (def.value.rows !== rows || def.value.cols !== streams.keys) {
      report.error(def.nameRange, 'shape-mismatch', `${def.name} is ${shape(def.value)} but the weights computed here are ${rows}×${streams.keys} (${what}): the given weights are compared with them entry by entry.`);
      ok = false;
    }
  }
  if (ok) spec.weights = defs.map((def) => def.value);
}

/** Only weights (no X, no Q): a spec that shows them, every head the same shape. */
function weightsOnly(problem: Problem, inputs: Inputs, spec: AttentionSpec, report: Report): SpecResult {
  const defs = givenWeights(inputs, spec.options.heads, report);
  if (report.errors > 0 || !defs) return { diagnostics: report.diagnostics };
  const first = defs[0];
  const odd = defs.find((def) => def.value.rows !== first.value.rows || def.value.cols !== first.value.cols);
  if (odd) {
    report.error(odd.nameRange, 'shape-mismatch', `${odd.name} is ${shape(odd.value)} but ${first.name} is ${shape(first.value)}: every head's weights are queries × keys of the same sequence.`);
    return { diagnostics: report.diagnostics };
  }
  report.add(first.nameRange, 'info', 'weights-only', `Only attention weights are given: they are shown as they are. Add Q and K (or X with W_Q and W_K) to compare them with the weights computed from those.`);
  spec.weights = defs.map((def) => def.value);
  spec.options.heads = defs.length;
  checkTokens(problem, spec, { queries: first.value.rows, keys: first.value.cols, queryWidth: 0, keyWidth: 0, valueWidth: 0 }, report, first.nameRange);
  if (problem.tokens) spec.tokens = problem.tokens;
  if (problem.keyTokens) spec.keyTokens = problem.keyTokens;
  return { spec, diagnostics: report.diagnostics };
}
