// Reading in the worker, through the real worker thread: the text arrives in slices, then as
// edits; the reading equals parseDocument's on the same text, with its numbers on shared memory
// (posted without a copy); a worker that lacks the text (restarted, missed an edit) answers null
// instead of reading something else; text past the size limit is left unread, with a warning
// that names the setting.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from '../../../src/core/parse';
import type { ParseResult } from '../../../src/core/types';
import type { WorkerReading } from '../../../src/protocol';
import { AttentionWorker } from '../../../src/worker/client';

const root = join(__dirname, '..', '..', '..');
const example = readFileSync(join(root, 'examples', '01-worked-example.md'), 'utf8');
const NO_LIMIT = 2 ** 30;

/** The reading without what cannot be compared across threads (timings). */
function shapeOf(parse: ParseResult) {
  return parse.problems.map((problem) => ({
    range: problem.range,
    options: problem.options,
    matrices: problem.matrices.map((def) => ({
      name: def.name,
      range: def.range,
      rows: def.value.rows,
      cols: def.value.cols,
      data: Array.from(def.value.data),
      cellOffsets: Array.from(def.cellOffsets),
    })),
  }));
}

function sendInSlices(worker: AttentionWorker, document: string, version: number, text: string, size: number): void {
  for (let offset = 0; offset === 0 || offset < text.length; offset += size) {
    worker.sendText(document, version, offset, text.slice(offset, offset + size));
  }
}

function readingOf(reading: WorkerReading | null): WorkerReading {
  assert.ok(reading, 'the worker answered null: it does not hold the text');
  return reading;
}

describe('reading in the worker', function () {
  this.timeout(60_000);
  let worker: AttentionWorker;

  beforeEach(() => {
    worker = new AttentionWorker(join(__dirname, 'tsWorker.cjs'), { maxOldGenerationSizeMb: 512 }, () => undefined);
  });
  afterEach(() => worker.dispose());

  it('reads a text sent in slices as parseDocument reads it, numbers on shared memory', async () => {
    sendInSlices(worker, 'a', 1, example, 37);
    const reading = readingOf(await worker.read('a', 1, NO_LIMIT));
    assert.deepEqual(shapeOf(reading.parse), shapeOf(parseDocument(example)));
    assert.deepEqual(reading.parse.diagnostics, parseDocument(example).diagnostics);
    const [def] = reading.parse.problems[0].matrices;
    assert.ok(def.value.data.buffer instanceof SharedArrayBuffer, 'the numbers were copied, not shared');
    assert.ok(def.cellOffsets.buffer instanceof SharedArrayBuffer, 'the cell offsets were copied, not shared');
    assert.equal(reading.specs.length, reading.parse.problems.length);
    assert.ok(reading.specs[0].spec?.X, 'the worker built the spec');
  });

  it('applies edits in the order they were made, as VS Code reports them', async () => {
    const text = 'X = [[1, 2], [3, 4]]\nW_Q = [[1, 0], [0, 1]]\n';
    sendInSlices(worker, 'a', 1, text, 8);
    // A multi-cursor edit: VS Code lists the later change first, so the earlier offsets hold.
    const changes = [
      { offset: text.indexOf('[0, 1]') + 4, length: 1, text: '7' },
      { offset: text.indexOf('2'), length: 1, text: '25' },
    ];
    worker.sendEdits('a', 1, 2, changes);
    const edited = 'X = [[1, 25], [3, 4]]\nW_Q = [[1, 0], [0, 7]]\n';
    const reading = readingOf(await worker.read('a', 2, NO_LIMIT));
    assert.deepEqual(shapeOf(reading.parse), shapeOf(parseDocument(edited)));
  });

  it('answers null, never a wrong reading, for a version it does not hold', async () => {
    sendInSlices(worker, 'a', 1, example, 1000);
    assert.equal(await worker.read('a', 2, NO_LIMIT), null, 'read a version it was never sent');
    worker.sendEdits('a', 5, 6, [{ offset: 0, length: 0, text: 'x' }]);
    assert.equal(await worker.read('a', 6, NO_LIMIT), null, 'applied edits to the wrong base');
    assert.equal(await worker.read('a', 1, NO_LIMIT), null, 'kept a copy that missed an edit');
    sendInSlices(worker, 'b', 1, example, 1000);
    worker.sendText('b', 1, 5, 'a slice out of place');
    assert.equal(await worker.read('b', 1, NO_LIMIT), null, 'a slice that does not follow on was kept');
    sendInSlices(worker, 'c', 1, example, 1000);
    await worker.kill();
    assert.equal(await worker.read('c', 1, NO_LIMIT), null, 'a fresh worker claims a text it was never sent');
    worker.forgetDocument('c');
  });

  it('leaves the text past maxChars unread, with a warning that names the setting', async () => {
    const matrix = 'X = [[1, 2], [3, 4]]\n';
    const text = `${matrix}W_Q = [[1, 0], [0, 1]]\n${'# filler\n'.repeat(20)}`;
    sendInSlices(worker, 'a', 1, text, 1000);
    const reading = readingOf(await worker.read('a', 1, matrix.length + 3));
    assert.deepEqual(reading.parse.problems[0].matrices.map((def) => def.name), ['X']);
    const warning = reading.parse.diagnostics.find((d) => d.code === 'file-too-large');
    assert.deepEqual(warning, {
      range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } },
      severity: 'warning',
      code: 'file-too-large',
      message:
        'This file is 0.000214 MB, more than attentionLens.maxFileMB = 0.0000229 MB: Attention Lens read its first line. ' +
        'Raise attentionLens.maxFileMB to read it all.',
    });
  });
});
