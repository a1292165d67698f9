// Tensor files read in the worker thread (src/worker/main.ts): decoded there with each tensor's
// summary and handed to the host without a copy; a file the reader refuses is a rejected promise
// with the reader's message, and the worker goes on serving.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttentionWorker } from '../../../src/worker/client';
import { npyBytes } from '../parse/npyBytes';

const fixtures = join(__dirname, '..', '..', 'fixtures', 'tensors');

describe('worker: tensor files', function () {
  this.timeout(120_000);
  const worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), {}, () => undefined);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'attention-lens-tensors-'))));
  after(() => {
    worker.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a 4096×4096 float32 .npy (64 MB) in the worker: float32 values, transferred, with statistics', async () => {
    const n = 4096;
    const { bytes, values } = npyBytes(n, n);
    values[0] = -3;
    values[n * n - 1] = 5;
    const file = join(dir, 'big.npy');
    writeFileSync(file, bytes);
    const { file: content, summaries } = await worker.readTensorFile(file, 2 ** 26);
    const [tensor] = content.tensors;
    assert.deepEqual(tensor.shape, [n, n]);
    assert.ok(tensor.data instanceof Float32Array);
    assert.equal(tensor.data.buffer.byteLength, n * n * 4);
    assert.deepEqual([summaries[0].min, summaries[0].max, summaries[0].nan], [-3, 5, 0]);
  });

  it('refuses a file over the element limit, and a hostile pickle, then still reads', async () => {
    await assert.rejects(worker.readTensorFile(join(fixtures, 'acts.npy'), 3), /more than the 3 allowed/);
    await assert.rejects(worker.readTensorFile(join(fixtures, 'pt', 'hostile-os-system.pt'), 1000), /asks for `posix\.system`/);
    const { file } = await worker.readTensorFile(join(fixtures, 'pt', 'mha.pt'), 1000);
    assert.deepEqual(file.tensors.map((t) => t.key), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']);
  });
});
