// A notebook read in the real worker thread: the cells go over whole and the reading that comes
// back equals parseCells' on the same cells, its numbers on shared memory; a worker that dies
// fails the read with its clear error, and the next read starts a fresh worker.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCells, readNotebook, type NotebookCell } from '../../../src/core/parse/notebook';
import { AttentionWorker } from '../../../src/worker/client';

const root = join(__dirname, '..', '..', '..');
const read = readNotebook(readFileSync(join(root, 'examples', '12-notebook.ipynb'), 'utf8'));
const cells = 'cells' in read ? read.cells : ([] as NotebookCell[]);

/** Numbers as plain arrays: shared and unshared typed arrays compare alike. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_key, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v)));

describe('reading a notebook in the worker', function () {
  this.timeout(60_000);
  let worker: AttentionWorker;

  beforeEach(() => {
    worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, () => undefined);
  });
  afterEach(() => worker.dispose());

  it('reads the cells as parseCells does, with its numbers on shared memory and a spec per problem', async () => {
    assert.ok(cells.length > 0);
    const reading = await worker.readCells(cells);
    assert.deepEqual(plain(reading.parse), plain(parseCells(cells)));
    const [problem] = reading.parse.problems;
    assert.deepEqual(problem.matrices.map((m) => [m.name, m.range.start.cell]), [['X', 1], ['W_Q', 3], ['W_K', 3], ['W_V', 5]]);
    assert.ok(problem.matrices[0].value.data.buffer instanceof SharedArrayBuffer, 'the numbers were copied, not shared');
    assert.ok(reading.specs[0].spec, 'the problem has its spec');
  });

  it('a read waiting when the worker dies fails with its error; the next read starts a fresh worker', async () => {
    const reading = worker.readCells(cells);
    await worker.kill();
    await assert.rejects(reading, /The attention worker stopped unexpectedly/);
    assert.equal((await worker.readCells(cells)).parse.problems.length, 1);
    assert.equal(worker.starts, 2);
  });
});
