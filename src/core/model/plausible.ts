// A config.json that lies about its model's size is refused in one line before anything is
// allocated for it: `num_hidden_layers` 2147483648 on a Llama folder made the CLI build a record
// per layer and die out of JavaScript heap after 15 s (exit 6, an 18-line V8 report; issue 41).
// The bounds are far above every published model (Llama 3.1 405B: 126 layers, hidden 16384,
// 128 heads, intermediate 53248; the largest vocabularies ~262k), so no real config meets them.

/** The largest value each size may take, by its key in the configs of every supported family. */
const LIMITS: [keys: string[], what: string, max: number][] = [
  [['num_hidden_layers', 'n_layer', 'num_layers', 'num_decoder_layers', 'encoder_layers', 'decoder_layers'], 'layers', 1024],
  [['hidden_size', 'n_embd', 'd_model'], 'a hidden size', 131072],
  [['intermediate_size', 'n_inner', 'ffn_dim', 'd_ff', 'encoder_ffn_dim', 'decoder_ffn_dim'], 'an MLP width', 1 << 20],
  [['num_attention_heads', 'n_head', 'num_key_value_heads', 'num_heads', 'encoder_attention_heads', 'decoder_attention_heads'], 'heads', 4096],
  [['head_dim', 'd_kv'], 'a head size', 16384],
  [['relative_attention_num_buckets', 'relative_attention_max_distance'], 'relative position buckets', 1 << 20],
  [['vocab_size'], 'a vocabulary', 1 << 24],
  [['max_position_embeddings', 'n_positions', 'n_ctx'], 'positions', 1 << 24],
  [['type_vocab_size'], 'token types', 1 << 16],
];
/** Parameters a config may imply at most (ten times the largest open model). */
const MAX_PARAMETERS = 5e12;

const sizeOf = (json: Record<string, unknown>, keys: string[]): number | undefined => {
  for (const key of keys) if (typeof json[key] === 'number') return json[key];
  return undefined;
};

/** Why config.json's sizes cannot be a real model's (the first size no model has, or the parameters they imply together), or undefined. */
export function implausibleSizes(json: Record<string, unknown>): string | undefined {
  for (const [keys, what, max] of LIMITS) {
    for (const key of keys) {
      const value = json[key];
      if (typeof value === 'number' && value > max) {
        return `config.json's ${key} is ${value}, more than any model has (${what}: at most ${max}): this config does not describe a real checkpoint`;
      }
    }
  }
  const layers = sizeOf(json, LIMITS[0][0]) ?? 0;
  const hidden = sizeOf(json, LIMITS[1][0]) ?? 0;
  const ffn = sizeOf(json, LIMITS[2][0]) ?? 4 * hidden;
  const vocab = sizeOf(json, ['vocab_size']) ?? 0;
  const parameters = layers * (4 * hidden * hidden + 3 * hidden * ffn) + 2 * vocab * hidden;
  if (parameters > MAX_PARAMETERS) {
    return `config.json's sizes imply ${(parameters / 1e12).toFixed(1)} trillion parameters (${layers} layers of hidden ${hidden}, MLP ${ffn}, vocabulary ${vocab}): more than any model, so this config does not describe the checkpoint`;
  }
  return undefined;
}
