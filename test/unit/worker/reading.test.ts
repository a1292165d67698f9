// Reading in the worker, through the real worker thread: the text arrives in slices, then as
// edits; the reading equals parseDocument's on the same text, with a large matrix's numbers on
// shared memory (posted without a copy); a worker that lacks the text (restarted, missed an
// edit) answers null instead of reading something else; text past the size limit is left
// unread, with a warning that names the setting.
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

  it('reads a text sent in slices as parseDocument reads it; small matrices are copied', async () => {
    sendInSlices(worker, 'a', 1, example, 37);
    const reading = readingOf(await worker.read('a', 1, NO_LIMIT));
    assert.deepEqual(shapeOf(reading.parse), shapeOf(parseDocument(example)));
    assert.deepEqual(reading.parse.diagnostics, parseDocument(example).diagnostics);
    const [def] = reading.parse.problems[0].matrices;
    // Posting a SharedArrayBuffer costs more than copying a few numbers.
    assert.ok(!(def.value.data.buffer instanceof SharedArrayBuffer), 'a 3×4 matrix went on shared memory');
    const values = Array.from(def.value.data);
    assert.deepEqual(reading.statistics[0][0], {
      min: Math.min(...values),
      max: Math.max(...values),
      sum: values.reduce((a, b) => a + b, 0),
      finite: values.length,
      count: values.length,
    });
    assert.equal(reading.specs.length, reading.parse.problems.length);
    assert.ok(reading.specs[0].spec?.X, 'the worker built the spec');
  });

  it('a matrix too large for the scratch arrives whole on its own shared memory', async () => {
    // 300×256 = 76,800 entries: past the reader's 65,536-entry scratch, so it grew a buffer of its own.
    const rows = Array.from({ length: 300 }, (_, r) => `[${Array.from({ length: 256 }, (_, c) => (r * 256 + c) % 1000).join(', ')}]`);
    const text = `X = [${rows.join(',\n')}]\n`;
    sendInSlices(worker, 'a', 1, text, 100_000);
    const reading = readingOf(await worker.read('a', 1, NO_LIMIT));
    assert.deepEqual(shapeOf(reading.parse), shapeOf(parseDocument(text)));
    const [def] = reading.parse.problems[0].matrices;
    assert.equal(def.value.data.length, 76_800);
    assert.ok(def.value.data.buffer instanceof SharedArrayBuffer, 'the numbers were copied, not shared');
    assert.ok(def.cellOffsets.buffer instanceof SharedArrayBuffer, 'the cell offsets were copied, not shared');
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
    const text = `${matrix}W_Q = [[1, 0],\n       [0, 1]]\n${'# filler\n'.repeat(20)}`;
    sendInSlices(worker, 'a', 1, text, 1000);
    // The limit falls inside W_Q's second line: the text is read up to the line before.
    const reading = readingOf(await worker.read('a', 1, text.indexOf('[0, 1]')));
    assert.deepEqual(reading.parse.problems[0].matrices.map((def) => def.name), ['X']);
    // W_Q is cut in the middle: it is not read, and not called "never closed" either.
    assert.deepEqual(reading.parse.problems[0].unreadable?.map((def) => def.name), ['W_Q']);
    assert.deepEqual(reading.parse.diagnostics, [
      {
        range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } },
        severity: 'warning',
        code: 'file-too-large',
        message:
          'This file is 0.00022 MB, more than attentionLens.maxFileMB = 0.000041 MB: Attention Lens read its first 2 lines. ' +
          'Raise attentionLens.maxFileMB to read it all.',
      },
    ]);
  });
});
