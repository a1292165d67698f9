import type { Role } from '../types';

// Matrix names → roles. Names are compared ignoring case, `_`, `^`, `{}`, `\`, quotes and LaTeX
// font commands, so `W^{Q}`, `W_Q`, `\mathbf{W}^Q`, `"WQ"` and `wq` are one name.

/** What a name means: a matrix role (maybe one head's), or a list of token labels. */
export type NameMeaning =
  | { kind: 'matrix'; role: Role; head?: number }
  | { kind: 'tokens'; keys: boolean }
  | { kind: 'unknown' };

const ROLE_ALIASES: Record<string, Role> = {
  x: 'X',
  e: 'X',
  input: 'X',
  inputs: 'X',
  embeddings: 'X',
  y: 'context',
  context: 'context',
  memory: 'context',
  xkv: 'context',
  encoder: 'context',
  encoderoutput: 'context',
  pe: 'PE',
  positions: 'PE',
  positional: 'PE',
  positionalencoding: 'PE',
  wq: 'WQ',
  wk: 'WK',
  wv: 'WV',
  wo: 'WO',
  wquery: 'WQ',
  wkey: 'WK',
  wvalue: 'WV',
  wout: 'WO',
  woutput: 'WO',
  q: 'Q',
  k: 'K',
  v: 'V',
  query: 'Q',
  queries: 'Q',
  key: 'K',
  keys: 'K',
  value: 'V',
  values: 'V',
  m: 'mask',
  mask: 'mask',
  attnmask: 'mask',
  attentionmask: 'mask',
  padding: 'padding',
  pad: 'padding',
  paddingmask: 'padding',
  keypaddingmask: 'padding',
  wa: 'Wa',
  w1: 'W1',
  w2: 'W2',
  va: 'va',
  do: 'dO',
  dout: 'dO',
  gradoutput: 'dO',
  gradout: 'dO',
  alibislopes: 'alibiSlopes',
  slopes: 'alibiSlopes',
  segments: 'segments',
  segmentids: 'segments',
  documentids: 'segments',
  docids: 'segments',
  documents: 'segments',
  // Attention weights as a program has them (PyTorch's `attn_weights`, `attention_probs`, `p_attn`…).
  attn: 'weights',
  attnweights: 'weights',
  attentionweights: 'weights',
  attnprobs: 'weights',
  attentionprobs: 'weights',
  pattn: 'weights',
  weights: 'weights',
};

const TOKEN_ALIASES: Record<string, boolean> = {
  tokens: false,
  labels: false,
  words: false,
  querytokens: false,
  keytokens: true,
  sourcetokens: true,
  srctokens: true,
  contexttokens: true,
  memorytokens: true,
};

/** Roles that may come one per head. */
const PER_HEAD: Record<string, Role> = { wq: 'WQ', wk: 'WK', wv: 'WV' };

/** Names of given weights that may carry a head: `attn_weights1`, `attn^{(2)}`, `weights[0]`, `attn_h1`. */
const WEIGHT_NAMES = 'attnweights|attentionweights|attnprobs|attentionprobs|pattn|attn|weights';

/** `W^{Q}` → `wq`, `\mathbf{W}_{K}` → `wk`, `"key_padding_mask"` → `keypaddingmask`. */
function normalizeName(name: string): string {
  return name
    .replace(/\\(?:mathbf|mathrm|mathit|boldsymbol|bm|operatorname|text)\b/g, '')
    .replace(/[\s_^{}\\"'`]/g, '')
    .toLowerCase();
}

export function classifyName(name: string): NameMeaning {
  const key = normalizeName(name);
  const role = ROLE_ALIASES[key];
  if (role) return { kind: 'matrix', role };
  const keys = TOKEN_ALIASES[key];
  if (keys !== undefined) return { kind: 'tokens', keys };
  const perHead = headOf(key);
  return perHead ? { kind: 'matrix', ...perHead } : { kind: 'unknown' };
}

/**
 * Per-head projections, 0-based: `W_Q1` and `Wq_h1` and `W_1^Q` (Vaswani's W_i^Q) are 1-based
 * (head 0), `W_Q^{(2)}` is 1-based (head 1), `W_Q[0]` is 0-based (head 0).
 */
function headOf(key: string): { role: Role; head: number } | undefined {
  let match = /^(w[qkv])h?(\d{1,3})$/.exec(key) ?? /^(w[qkv])\((\d{1,3})\)$/.exec(key);
  if (match && Number(match[2]) >= 1) return { role: PER_HEAD[match[1]], head: Number(match[2]) - 1 };
  match = /^(w[qkv])\[(\d{1,3})\]$/.exec(key);
  if (match) return { role: PER_HEAD[match[1]], head: Number(match[2]) };
  match = /^w(\d{1,3})([qkv])$/.exec(key);
  if (match && Number(match[1]) >= 1) return { role: PER_HEAD[`w${match[2]}`], head: Number(match[1]) - 1 };
  match = new RegExp(`^(?:${WEIGHT_NAMES})(?:h?(\\d{1,3})|\\((\\d{1,3})\\)|\\[(\\d{1,3})\\])$`).exec(key);
  if (match && match[3] !== undefined) return { role: 'weights', head: Number(match[3]) };
  const oneBased = match && Number(match[1] ?? match[2]);
  if (oneBased && oneBased >= 1) return { role: 'weights', head: oneBased - 1 };
  return undefined;
}

/** Display name of a role in messages (`W_Q`, `mask`, …). */
export function roleLabel(role: Role): string {
  switch (role) {
    case 'WQ':
    case 'WK':
    case 'WV':
    case 'WO':
      return `W_${role[1]}`;
    case 'Wa':
      return 'W_a';
    case 'W1':
      return 'W_1';
    case 'W2':
      return 'W_2';
    case 'va':
      return 'v_a';
    case 'alibiSlopes':
      return 'alibi_slopes';
    case 'weights':
      return 'attn_weights';
    default:
      return role;
  }
}
