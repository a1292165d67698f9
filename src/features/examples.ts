// The worked examples of `Attention: Insert Example…`, written as nested lists (readable in every
// notation the reader accepts) under a directive line in the document's comment style.

export interface Example {
  id: string;
  label: string;
  detail: string;
  /** Directive words after `attention:`. */
  directive: string;
  body: string;
}

export const EXAMPLES: Example[] = [
  {
    id: 'single-head',
    label: 'Single head',
    detail: '3 tokens, d_model = 4, d_k = d_v = 2: the textbook case',
    directive: 'name="Single head"',
    body: `tokens = ["I", "love", "cats"]
X = [[1, 0, 1, 0],
     [0, 2, 0, 2],
     [1, 1, 1, 1]]
W_Q = [[1, 0], [1, 0], [0, 1], [0, 1]]
W_K = [[0, 1], [1, 0], [0, 1], [1, 0]]
W_V = [[1, 0], [0, 1], [1, 0], [0, 1]]`,
  },
  {
    id: 'causal',
    label: 'Causal mask',
    detail: 'a decoder: each token sees only itself and the tokens before it',
    directive: 'name="Causal mask" causal',
    body: `tokens = ["The", "cat", "sat", "down"]
X = [[1, 0, 1, 0],
     [0, 2, 0, 1],
     [1, 1, 1, 1],
     [0.5, 0, 2, 0]]
W_Q = [[1, 0], [0, 1], [1, 0], [0, 1]]
W_K = [[0, 1], [1, 0], [0, 1], [1, 0]]
W_V = [[1, 0], [0, 1], [1, 1], [0, 0]]`,
  },
  {
    id: 'multi-head',
    label: 'Multi-head with W_O',
    detail: 'heads=2 split W_Q/W_K/W_V column-wise; W_O mixes the concatenated heads',
    directive: 'name="Two heads with W_O" heads=2',
    body: `tokens = ["a", "red", "ball"]
X = [[1, 0, 0, 1],
     [0, 1, 1, 0],
     [1, 1, 0, 0]]
W_Q = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
W_K = [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
W_V = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
W_O = [[0.5, 0, 0, 0.5], [0, 0.5, 0.5, 0], [0.5, 0, 0.5, 0], [0, 0.5, 0, 0.5]]`,
  },
  {
    id: 'cross-attention',
    label: 'Cross-attention',
    detail: '2 decoder queries attend over 3 encoder states (weights are 2×3)',
    directive: 'name="Cross-attention"',
    body: `tokens = ["le", "chat"]
key_tokens = ["the", "cat", "sat"]
X = [[1, 0, 0.5],
     [0, 1, 0.5]]
context = [[1, 0, 0],
           [0, 1, 0],
           [0, 0, 1]]
W_Q = [[1, 0], [0, 1], [0.5, 0.5]]
W_K = [[1, 0], [0, 1], [0.5, 0.5]]
W_V = [[1, 0], [0, 1], [1, 1]]`,
  },
  {
    id: 'grouped-query',
    label: 'Grouped-query attention',
    detail: '4 query heads share 2 key/value heads (kv_heads=2)',
    directive: 'name="Grouped-query attention" heads=4 kv_heads=2',
    body: `tokens = ["x1", "x2", "x3"]
X = [[1, 0, 1, 0],
     [0, 1, 0, 1],
     [1, 1, 0, 0]]
W_Q1 = [[1, 0], [0, 1], [0, 0], [0, 0]]
W_Q2 = [[0, 1], [1, 0], [0, 0], [0, 0]]
W_Q3 = [[0, 0], [0, 0], [1, 0], [0, 1]]
W_Q4 = [[1, 1], [0, 0], [0, 0], [1, -1]]
W_K1 = [[1, 0], [0, 1], [1, 0], [0, 1]]
W_K2 = [[0, 1], [1, 0], [0, 1], [1, 0]]
W_V1 = [[1, 0], [0, 1], [0, 0], [0, 0]]
W_V2 = [[0, 0], [0, 0], [1, 0], [0, 1]]`,
  },
];
