// T5's relative position bias (modeling_t5.py, T5Attention._relative_position_bucket and
// compute_bias): each (query, key) pair's distance key − query falls in one of `buckets` buckets —
// exact for small distances, logarithmic up to `maxDistance`, bidirectional in the encoder (half
// the buckets for keys after the query) and causal in the decoder (only keys at or before it) —
// and each head adds its learned value for that bucket to its scores. The forward passes each
// head's bias to the engine as that head's additive mask: what the model ran is what the step view
// shows (engine/masks.ts adds it to the scaled scores, with the causal mask).

/** The bucket of relative position `relative` (key − query), as _relative_position_bucket computes it. */
export function relativeBucket(relative: number, bidirectional: boolean, buckets: number, maxDistance: number): number {
  let bucket = 0;
  let distance: number;
  let count = buckets;
  if (bidirectional) {
    count = Math.floor(buckets / 2);
    if (relative > 0) bucket += count;
    distance = Math.abs(relative);
  } else distance = -Math.min(relative, 0);
  const maxExact = Math.floor(count / 2);
  if (distance < maxExact) return bucket + distance;
  const large = maxExact + Math.trunc((Math.log(distance / maxExact) / Math.log(maxDistance / maxExact)) * (count - maxExact));
  return bucket + Math.min(large, count - 1);
}

/**
 * Every head's bias [heads × queries × keys] for query rows at positions firstQuery… against keys
 * at 0…keys − 1, from the stack's table [buckets × heads] (nn.Embedding(buckets, heads)).
 */
export function relativeBias(table: Float32Array, heads: number, bidirectional: boolean, buckets: number, maxDistance: number, firstQuery: number, queries: number, keys: number): Float32Array {
  const out = new Float32Array(heads * queries * keys);
  for (let i = 0; i < queries; i++) {
    for (let j = 0; j < keys; j++) {
      const bucket = relativeBucket(j - (firstQuery + i), bidirectional, buckets, maxDistance);
      for (let h = 0; h < heads; h++) out[(h * queries + i) * keys + j] = table[bucket * heads + h];
    }
  }
  return out;
}
