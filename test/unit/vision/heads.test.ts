// A picture run's heads as the views open them, for each vision family's fixture: step by step
// (the drill-down's X = the layer's real normed input with a column of ones, W_Q/W_K/W_V the
// checkpoint's head columns with their biases as the last row) giving PyTorch's attention for that
// head; and one query's row of every head (the model view's overlays) equal to the head's weights.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { runModel } from '../../../src/core/model/run';
import type { Matrix } from '../../../src/core/types';
import { folderFiles } from '../../../src/node/modelFiles';
import { parseHeadsViewMessage } from '../../../src/protocol';
import { answerQuery, outOfRange } from '../../../src/views/heads';
import { modelFixture, modelReference, REFERENCE_TOLERANCE } from '../model/fixtures';
import { VISION_FIXTURES, visionFixture, visionReferences } from './fixtures';

/** Every float32 tensor of a safetensors file by name, read here from the header (not by the extension's reader). */
function checkpoint(file: string): Map<string, { shape: number[]; data: Float32Array }> {
  const bytes = readFileSync(file);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    assert.equal(entry.dtype, 'F32', `${name}: the fixtures are float32`);
    const [from, to] = entry.data_offsets.map((offset) => 8 + headerLength + offset);
    tensors.set(name, { shape: entry.shape, data: new Float32Array(bytes.buffer.slice(bytes.byteOffset + from, bytes.byteOffset + to)) });
  }
  return tensors;
}

/** Layer `layer`'s projection `which` (query, key, value) in the checkpoint: ViT/DeiT/DINOv2's `attention.attention.query`, CLIP/SigLIP's `self_attn.q_proj`. */
function projection(tensors: ReturnType<typeof checkpoint>, layer: number, which: 'query' | 'key' | 'value') {
  const pattern = new RegExp(`\\.?layers?\\.${layer}\\.(attention\\.attention\\.${which}|self_attn\\.${which[0]}_proj)\\.`);
  const named = (kind: string) => [...tensors].filter(([name]) => pattern.test(name) && name.endsWith(`.${kind}`));
  const [weight] = named('weight');
  const [bias] = named('bias');
  assert.ok(weight && bias, `layer ${layer} ${which} in the checkpoint`);
  return { weight: weight[1], bias: bias[1] };
}

/** The biggest |spec − checkpoint| over head `head`'s columns (weight transposed, bias as the last row). */
function offFromCheckpoint(W: Matrix, { weight, bias }: ReturnType<typeof projection>, head: number, d: number): number {
  const [out, hidden] = weight.shape;
  assert.deepEqual([W.rows, W.cols], [hidden + 1, d]);
  assert.ok(out >= (head + 1) * d);
  let worst = 0;
  for (let j = 0; j < d; j++) {
    for (let i = 0; i < hidden; i++) worst = Math.max(worst, Math.abs(W.data[i * d + j] - weight.data[(head * d + j) * hidden + i]));
    worst = Math.max(worst, Math.abs(W.data[hidden * d + j] - bias.data[head * d + j]));
  }
  return worst;
}

describe("a picture run's heads, step by step and one row at a time", function () {
  this.timeout(120_000);

  for (const name of VISION_FIXTURES) {
    it(`${name}: each head's step-by-step spec is the layer's input and the checkpoint's weights, and gives PyTorch's attention`, async () => {
      const folder = visionFixture(name);
      // A PNG picture: its reference is exact to the usual tolerance (a JPEG's is decoded differently).
      const reference = visionReferences(name).find((r) => r.picture.endsWith('.png'))!;
      const run = await runModel(folderFiles(folder), { image: { name: reference.picture, bytes: readFileSync(join(folder, reference.picture)) } });
      const tensors = checkpoint(join(folder, 'model.safetensors'));
      const n = run.queryCount;
      for (let l = 0; l < run.layerCount; l++) {
        for (let h = 0; h < run.headCount; h++) {
          const spec = await run.drillDownSpec(l, h);
          assert.deepEqual(spec.tokens, run.tokens);
          assert.ok(spec.X && spec.WQ && spec.WK && spec.WV, `${name} L${l} H${h}: X and the weights, not Q and K given`);
          const d = spec.WQ[0].cols;
          // The column of ones that carries the biases.
          for (let t = 0; t < n; t++) assert.equal(spec.X.data[t * spec.X.cols + spec.X.cols - 1], 1);
          (['query', 'key', 'value'] as const).forEach((which, k) => {
            const off = offFromCheckpoint([spec.WQ!, spec.WK!, spec.WV!][k][0], projection(tensors, l, which), h, d);
            assert.equal(off, 0, `${name} L${l} H${h} ${which}: off the checkpoint by ${off}`);
          });
          const stepped = runAttention(spec).heads[0].weights.data;
          const expected = reference.attentions[l][h].flat();
          let worst = 0;
          stepped.forEach((value, i) => (worst = Math.max(worst, Math.abs(value - expected[i]))));
          assert.ok(worst < REFERENCE_TOLERANCE.attention, `${name} L${l} H${h}: the step-by-step attention is off PyTorch's by ${worst}`);
        }
      }
    });
  }

  it("one query's row of every head (the model view's overlays) is that row of the head's weights, over the keys asked for", async () => {
    for (const name of VISION_FIXTURES) {
      const folder = visionFixture(name);
      const reference = visionReferences(name)[0];
      const run = await runModel(folderFiles(folder), { image: { name: reference.picture, bytes: readFileSync(join(folder, reference.picture)) } });
      const n = run.queryCount;
      const keyStart = n - run.patchGrid![0] * run.patchGrid![1];
      const layers = Array.from({ length: run.layerCount }, (_, l) => l);
      const heads = Array.from({ length: run.headCount }, (_, h) => h);
      for (const query of [0, n - 1]) {
        const answer = await answerQuery(run, { kind: 'rows', query, keyStart, layers, heads });
        assert.ok(answer.kind === 'rows');
        assert.equal(answer.data.length, layers.length * heads.length * (n - keyStart), 'the patches alone');
        let worst = 0;
        for (const l of layers) {
          for (const h of heads) {
            const row = run.weights(l, h).subarray(query * n + keyStart, (query + 1) * n);
            const sent = answer.data.subarray((l * heads.length + h) * (n - keyStart), (l * heads.length + h + 1) * (n - keyStart));
            row.forEach((value, k) => (worst = Math.max(worst, Math.abs(value - sent[k]))));
          }
        }
        // The row is computed alone (one query against the kept K), the head by the fast kernels: float32 rounding apart.
        assert.ok(worst < 1e-6, `${name} from ${run.tokens[query]}: off by ${worst}`);
      }
    }
  });

  it("a causal text model's rows are its heads' rows too (a row whose mask depends on its position comes from the whole head)", async () => {
    const run = await runModel(folderFiles(modelFixture('gpt2')), { ids: modelReference('gpt2').token_ids });
    const n = run.queryCount;
    const answer = await answerQuery(run, { kind: 'rows', query: 3, keyStart: 0, layers: [0, 1], heads: [0, 1] });
    assert.ok(answer.kind === 'rows');
    [0, 1].forEach((l) => [0, 1].forEach((h) => assert.deepEqual(answer.data.subarray((l * 2 + h) * n, (l * 2 + h + 1) * n), run.weights(l, h).subarray(3 * n, 4 * n), `L${l} H${h}`)));
  });

  it('a rows query is validated and kept in range', async () => {
    const folder = visionFixture('vit-classifier');
    const run = await runModel(folderFiles(folder), { image: { name: 'rgba.png', bytes: readFileSync(join(folder, 'rgba.png')) } });
    const query = { kind: 'rows', query: 3, keyStart: 1, layers: [0, 1], heads: [1] };
    assert.deepEqual(parseHeadsViewMessage({ type: 'query', requestId: 1, query }), { type: 'query', requestId: 1, query });
    assert.equal(parseHeadsViewMessage({ type: 'query', requestId: 1, query: { ...query, query: -1 } }), undefined);
    assert.equal(parseHeadsViewMessage({ type: 'query', requestId: 1, query: { ...query, heads: 'all' } }), undefined);
    assert.equal(outOfRange(run, { kind: 'rows', query: 3, keyStart: 1, layers: [0, 1], heads: [1] }), undefined);
    assert.match(outOfRange(run, { kind: 'rows', query: 17, keyStart: 1, layers: [0], heads: [0] }) ?? '', /17 queries/);
    assert.match(outOfRange(run, { kind: 'rows', query: 0, keyStart: 1, layers: [2], heads: [0] }) ?? '', /2 layers/);
  });
});
