// A transformer made of attention layers only (no MLP, no norm), from explicit weights: the
// smallest model in which heads compose, as in Elhage et al.'s "A Mathematical Framework for
// Transformer Circuits". The residual stream starts as token embedding + position embedding;
// each layer adds Concat(heads)·W_O, every head computed by the engine's own attention
// (runAttention, causal), so nothing here repeats attention's math. It runs a hand-built model
// (examples/13-induction-head) without a model folder. Pure: no `vscode` import.
import { runAttention } from '../engine';
import type { Matrix } from '../types';
import type { AttentionStack } from './stack';

export interface AttentionOnlyLayer {
  /** Per head: W_Q, W_K [d_model × d_k] and W_V [d_model × d_v]. */
  query: Matrix[];
  key: Matrix[];
  value: Matrix[];
  /** [heads·d_v × d_model]. */
  output: Matrix;
}

export interface AttentionOnlyModel {
  /** The id the probe puts first. */
  bos: number;
  /** [vocabulary × d_model] and [positions × d_model]. */
  tokenEmbedding: Matrix;
  positionEmbedding: Matrix;
  layers: AttentionOnlyLayer[];
}

/**
 * The model as its JSON file holds it: matrices as nested lists; per layer `to_query`, `to_key`,
 * `to_value` (one matrix per head) and `to_stream` (W_O) — names the text reader does not take
 * for attention roles, so opening the file shows no problems.
 */
export function attentionOnlyModelOf(json: unknown, file: string): AttentionOnlyModel {
  const fail = (what: string): never => {
    throw new RangeError(`${file}: ${what}`);
  };
  const root = json as Record<string, unknown>;
  if (typeof root !== 'object' || root === null) fail('not a JSON object');
  const matrix = (value: unknown, name: string): Matrix => {
    if (!Array.isArray(value) || value.length === 0 || !value.every((row) => Array.isArray(row) && row.length === (value[0] as unknown[]).length)) {
      return fail(`${name} is not a non-empty matrix of equal rows`);
    }
    const rows = value as unknown[][];
    const data = Float64Array.from(rows.flat(), (x) => (typeof x === 'number' ? x : fail(`${name} holds ${JSON.stringify(x)}, not a number`)));
    return { rows: rows.length, cols: rows[0].length, data };
  };
  const tokenEmbedding = matrix(root.token_embedding, 'token_embedding');
  const positionEmbedding = matrix(root.position_embedding, 'position_embedding');
  const width = tokenEmbedding.cols;
  if (positionEmbedding.cols !== width) fail(`position_embedding has ${positionEmbedding.cols} columns but token_embedding ${width}`);
  if (!Number.isInteger(root.bos) || (root.bos as number) < 0 || (root.bos as number) >= tokenEmbedding.rows) fail('bos is not a token id of token_embedding');
  if (!Array.isArray(root.layers) || root.layers.length === 0) fail('layers is not a non-empty list');
  const layers = (root.layers as Record<string, unknown>[]).map((layer, l) => {
    const perHead = (key: string) => {
      const list = layer?.[key];
      if (!Array.isArray(list) || list.length === 0) return fail(`layers[${l}].${key} is not a list of per-head matrices`);
      return list.map((m, h) => matrix(m, `layers[${l}].${key}[${h}]`));
    };
    return { query: perHead('to_query'), key: perHead('to_key'), value: perHead('to_value'), output: matrix(layer?.to_stream, `layers[${l}].to_stream`) };
  });
  if (layers.some((layer) => layer.query.length !== layers[0].query.length)) fail('the layers differ in their number of heads');
  return { bos: root.bos as number, tokenEmbedding, positionEmbedding, layers };
}

/** Runs the model on `ids` and keeps every head's attention. Throws a RangeError naming what does not fit. */
export function attentionOnlyStack(model: AttentionOnlyModel, ids: readonly number[], name: string): AttentionStack {
  const n = ids.length;
  const width = model.tokenEmbedding.cols;
  if (n === 0) throw new RangeError('no tokens to run');
  if (n > model.positionEmbedding.rows) throw new RangeError(`${n} tokens, but the model has ${model.positionEmbedding.rows} positions`);
  const stream = new Float64Array(n * width);
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id >= model.tokenEmbedding.rows) throw new RangeError(`token id ${id} is outside the vocabulary 0…${model.tokenEmbedding.rows - 1}`);
    for (let c = 0; c < width; c++) stream[i * width + c] = model.tokenEmbedding.data[id * width + c] + model.positionEmbedding.data[i * width + c];
  });
  let X: Matrix = { rows: n, cols: width, data: stream };
  const maps: Matrix[][] = [];
  for (const layer of model.layers) {
    const result = runAttention({
      options: { heads: layer.query.length, score: 'scaled_dot', causal: 'top-left', dtype: 'float64', residual: true },
      X,
      WQ: layer.query,
      WK: layer.key,
      WV: layer.value,
      WO: layer.output,
    });
    maps.push(result.heads.map((head) => head.weights));
    if (!result.residual) throw new RangeError(`a layer's output has ${result.output.cols} columns, not the model's ${width}`);
    X = result.residual;
  }
  const tokens = ids.map((id) => (id === model.bos ? '<bos>' : `#${id}`));
  return {
    source: { kind: 'model', architecture: 'attention-only', folder: name },
    tokens,
    keyTokens: tokens,
    tokenIds: [...ids],
    layerCount: maps.length,
    headCount: maps[0].length,
    queryCount: n,
    keyCount: n,
    lowerTriangular: true,
    weights: (layer, head) => maps[layer][head].data,
  };
}
