// The contract between the reader (core/parse), the spec builder (core/spec), the engine
// (core/engine) and every front end (CLI, worker, panel). Pure data: no `vscode` import, and
// everything here survives structured cloning (worker messages) except where noted.

import type { SamplingRequest } from './model/samplingConfig';
import type { Languages, TargetInput } from './model/input';

export type DType = 'float64' | 'float32';

/** Dense row-major matrix. `data.length === rows * cols`. */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array | Float32Array;
}

/** 0-based line/character, as in VS Code; front ends that print 1-based convert at the edge. */
export interface Position {
  line: number;
  character: number;
  /** In a notebook: the 0-based cell the line/character is in (absent in a plain text file). */
  cell?: number;
  /** In a notebook: the 0-based output of `cell` the line/character is in (absent: its source). */
  output?: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  range: Range;
  severity: Severity;
  message: string;
  /** Stable machine-readable id, e.g. `ragged-row`, `shape-mismatch`, `unknown-option`. */
  code: string;
  /** Optional fix a learner can apply, e.g. "did you mean `heads`?". */
  suggestion?: string;
}

/** What a matrix means to attention. Names map to roles ignoring case, `_`, `^`, `{}`. */
export type Role =
  | 'X' // input embeddings (queries' source; also keys'/values' unless `context` is given)
  | 'context' // cross-attention: keys'/values' source (`Y`, `memory`, `context`, `X_kv`)
  | 'PE' // positional encoding added to X
  | 'WQ'
  | 'WK'
  | 'WV'
  | 'WO'
  | 'Q'
  | 'K'
  | 'V'
  | 'mask' // boolean (true = may attend) or additive (0 / -inf)
  | 'padding' // key padding vector, true = padded (ignored)
  | 'Wa' // Luong "general" score matrix
  | 'W1' // Bahdanau additive: query side
  | 'W2' // Bahdanau additive: key side
  | 'va' // Bahdanau additive: output vector
  | 'dO' // upstream gradient of the output
  | 'alibiSlopes' // one ALiBi slope per head (row `alibi_slopes`)
  | 'segments' // one document id per token: attention stays inside equal ids
  | 'weights'; // attention weights as the program (or the note) has them, Lq×Lk per head: shown beside the computed ones

export type ScoreFunction = 'scaled_dot' | 'dot' | 'general' | 'additive' | 'gaussian';
export type CausalAlignment = 'top-left' | 'bottom-right';
/** RoPE's pairs: (x_k, x_{k+d/2}) as Llama-style "rotate half" code, or (x_{2k}, x_{2k+1}). */
export type RopeLayout = 'half' | 'interleaved';

export interface AttentionOptions {
  name?: string;
  heads: number; // default 1
  kvHeads?: number; // grouped-query attention; default = heads
  /** Multiplies QKᵀ. Undefined = 1/√d_k (PyTorch `scale=None`). */
  scale?: number;
  score: ScoreFunction; // default 'scaled_dot'
  sigma?: number; // gaussian score width, default 1
  causal?: CausalAlignment; // undefined = no causal mask
  dtype: DType; // default 'float64'
  /** Add sinusoidal positional encoding to X (when no PE matrix is given). */
  sinusoidalPE?: boolean;
  /** Compute the backward pass (dO defaults to ones). */
  gradients?: boolean;
  /** Add the output back to the input: E' = E + ΔE (needs output width = d_model). */
  residual?: boolean;
  // Variants (engine/variants.ts). Positions are token indices, a query's offset by Lk − Lq.
  /** Rotary positions on Q and K per head: pair k turns by position·base^(−2k/d). */
  rope?: number;
  ropeLayout?: RopeLayout; // default 'half'
  /** Divides the scaled scores. */
  temperature?: number;
  /** s → C·tanh(s/C), after the temperature. */
  softcap?: number;
  /** Adds −m_h·|i − j| per head (the paper's slopes unless an `alibi_slopes` row is given). */
  alibi?: boolean;
  /** Query i sees keys with |i − j| < W (with causal: the W keys i − W < j ≤ i). */
  window?: number;
  /** The first P positions are visible to every query; the rest is causal (prefix-LM). */
  prefix?: number;
  /** The first S keys stay visible past the window (attention sinks). */
  sinks?: number;
  /** Only the last query row, against every key and value (one KV-cache step). */
  decode?: boolean;
}

/** A matrix as written in the source. */
export interface MatrixDef {
  name: string; // as written, e.g. `W^{Q}`
  role: Role | undefined; // undefined: a name the reader does not know (kept for hover/CodeLens)
  /** 0-based head index for per-head matrices (`W_Q1` → 0, `W_Q[0]` → 0, `W_Q^{(2)}` → 1). */
  head?: number;
  value: Matrix; // always float64 as read
  /** True when every entry was written as a boolean (masks). */
  boolean: boolean;
  nameRange: Range;
  /** From the name to the closing bracket / \end{…}. */
  range: Range;
  /** Text offset where each entry starts, row-major (hover maps a position to a cell). */
  cellOffsets: Uint32Array;
  /** Set when the numbers come from a tensor file rather than the text at `range` (then empty `cellOffsets`). */
  source?: TensorSource;
}

/** A tensor in a file: `key` is its name there (`layers.0.self_attn.q_proj.weight`, an .npz member). */
export interface TensorSource {
  kind: 'tensor';
  file: string;
  key: string;
}

/** A directive's `model="…" text="…"` (or `ids="…"`): run a whole model folder on an input. */
export interface ModelDirective {
  /** As written: relative to the text file's folder, or absolute. */
  path: string;
  text?: string;
  ids?: number[];
  /** `image="cat.png"`: a picture for a vision model, relative to the text file's folder, or absolute. */
  image?: string;
  /** An encoder–decoder model's target as written: `target="…"` (text) or `target_ids="…"`. */
  target?: Exclude<TargetInput, { generate: number }>;
  /** `generate=N`: at most N tokens generated greedily — a causal model's continuation of the text, an encoder–decoder model's target. */
  generate?: number;
  /** `chat`: the text is a user message, sent through the model's chat template. */
  chat?: boolean;
  /** `src_lang="fr_XX"` / `tgt_lang="de_DE"`: an mBART model's languages, as written (the run checks them). */
  languages?: Languages;
  /** `sample` (with `temperature=`, `top_k=`, `top_p=`, `seed=` as given): the generated tokens are drawn, not the most probable. */
  sample?: SamplingRequest;
}

export interface Problem {
  index: number; // 0-based, in file order
  name?: string;
  range: Range; // covers the directive (if any) and every definition
  directiveRange?: Range;
  /** Where each option was written in the directive, by its key (`window`, `rope`…). */
  optionRanges?: Record<string, Range>;
  options: AttentionOptions;
  matrices: MatrixDef[];
  tokens?: string[]; // labels of X's rows (and of keys, unless keyTokens)
  keyTokens?: string[]; // cross-attention labels of keys
  /** A whole-model run (the directive's `model=`): then the problem holds no matrices. */
  model?: ModelDirective;
  /** Definitions of known roles that could not be read (ragged, unclosed…): the reader said why. */
  unreadable?: { name: string; role: Role; range: Range }[];
  /** Definitions that load a tensor from a file (`X = np.load("acts.npy")`), not yet read. */
  references?: TensorReference[];
}

/** `NAME = np.load("file")[…]` in text: resolved into a MatrixDef by core/parse/tensors/resolve. */
export interface TensorReference {
  name: string;
  role: Role;
  head?: number;
  /** As written: relative to the text file's folder, or absolute. */
  file: string;
  /** The tensor's key (nested subscripts joined with `.`); undefined for a .npy or a lone tensor. */
  key?: string;
  transpose: boolean;
  nameRange: Range;
  range: Range;
}

export interface ParseResult {
  problems: Problem[];
  diagnostics: Diagnostic[];
}

/** Validated, computable inputs of one problem. Built by core/spec from a Problem. */
export interface AttentionSpec {
  options: AttentionOptions;
  X?: Matrix;
  context?: Matrix;
  PE?: Matrix;
  /** Per-head projections: length 1 when given whole (split by the engine), else length heads. */
  WQ?: Matrix[];
  WK?: Matrix[];
  WV?: Matrix[];
  WO?: Matrix;
  /** Precomputed Q/K/V (when no X): whole matrices, split column-wise across heads. */
  Q?: Matrix;
  K?: Matrix;
  V?: Matrix;
  /** Boolean (1 = may attend, 0 = blocked) or additive mask, Lq×Lk. */
  mask?: { kind: 'boolean' | 'additive'; value: Matrix };
  /** 1×Lk, 1 = padded. */
  padding?: Matrix;
  Wa?: Matrix;
  W1?: Matrix;
  W2?: Matrix;
  va?: Matrix;
  dO?: Matrix;
  /** 1×heads: ALiBi slopes given explicitly. */
  alibiSlopes?: Matrix;
  /** 1×Lk: document ids; a query at position p keeps the keys with segments[p]'s id. */
  segments?: Matrix;
  /** Attention weights given (a program's, a note's), one Lq×Lk matrix per head: compared with
   * the computed weights, or — with no X and no Q — shown alone. */
  weights?: Matrix[];
  tokens?: string[];
  keyTokens?: string[];
}

export interface HeadGradients {
  dQ: Matrix;
  dK: Matrix;
  dV: Matrix;
  dA: Matrix; // d loss / d weights
  dS: Matrix; // d loss / d (masked, scaled) scores
}

export interface HeadResult {
  Q: Matrix;
  K: Matrix;
  V: Matrix;
  scores: Matrix; // raw score function values (QKᵀ for dot scores)
  scaled: Matrix; // after scale, temperature and softcap (scale 1: equal to scores)
  mask: Matrix | null; // additive matrix actually applied (mask 0 / -Infinity, + ALiBi), null when none
  masked: Matrix; // scaled + mask
  weights: Matrix; // row softmax; fully masked rows are all 0
  output: Matrix; // weights · V
  kvHead: number; // which KV head this query head used (GQA)
  gradients?: HeadGradients;
  /** The weights given for this head (spec.weights) and max |given − computed| (NaN when either has a NaN there). */
  givenWeights?: Matrix;
  givenMaxDifference?: number;
}

export interface Gradients {
  dX?: Matrix;
  dContext?: Matrix; // cross-attention: gradient of the keys'/values' source
  dWQ?: Matrix;
  dWK?: Matrix;
  dWV?: Matrix;
  dWO?: Matrix;
  heads: HeadGradients[];
}

export interface Checks {
  rowSumsMaxError: number; // max |Σ_j A_ij − 1| over unmasked rows of every head
  rowsSumToOne: boolean;
  weightsInBounds: boolean; // 0 ≤ A ≤ 1
  permutationEquivariant?: boolean; // only for self-attention without causal/explicit masks
  permutationMaxError?: number;
  permutationRowsChecked?: number; // output rows compared (all of them up to 64)
  flops: number; // of this problem
  attentionBytes: number; // memory of the n×n matrices of this problem (all heads)
}

/** An output-only run (online softmax, O(n·d) memory): no n×n matrix is ever stored. */
export interface OutputOnlyResult {
  dtype: DType;
  concat: Matrix;
  output: Matrix;
  residual?: Matrix;
  warnings: string[];
  elapsedMs: number;
}

export interface AttentionResult {
  dtype: DType;
  input?: Matrix; // X (+ PE) as used
  heads: HeadResult[];
  concat: Matrix; // Concat(head outputs)
  output: Matrix; // concat · W_O, or concat
  residual?: Matrix; // input + output
  gradients?: Gradients;
  checks: Checks;
  warnings: string[]; // e.g. "query 2 (head 1) is fully masked: its output row is 0"
  elapsedMs: number;
  /** `decode`: the full run beside the one step — its weights per head, the step's row in it,
   * and the largest difference between the step's output and the full output's last row. */
  decode?: { row: number; fullWeights: Matrix[]; maxDifference: number };
  /** Only weights were given (no X, no Q): each head's `weights` and `givenWeights` are those,
   * nothing was computed, and Q, K, V, scores and outputs are empty (0 columns). */
  givenOnly?: boolean;
  /** Which fast backend computed it (absent: the reference engine), and, when the native one was
   * wanted but could not run, why (the status bar's hint). */
  backend?: { name: 'onnxruntime' | 'wasm'; fallback?: string };
}
