// A model folder on disk: a burst of reads shares one open file, which is closed once reads stop.
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { folderFiles } from '../../../src/node/modelFiles';
import { skipBecause } from '../../skip';

/** How many of this process's file descriptors point at `file` (Linux's /proc). */
function descriptorsOf(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === file;
    } catch {
      return false; // closed meanwhile
    }
  }).length;
}

describe('model folder files', function () {
  let folder: string;
  const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) % 251);
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'attention-lens-files-'));
    writeFileSync(join(folder, 'weights.bin'), bytes);
    writeFileSync(join(folder, 'burst.bin'), bytes); // its own file: the test before keeps weights.bin open a second
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('reads byte ranges, and says which file ends early', async () => {
    const files = folderFiles(folder);
    assert.deepEqual(await files.read('weights.bin', 100, 16), bytes.subarray(100, 116));
    const into = new Uint8Array(64);
    assert.deepEqual(await files.read('weights.bin', 4000, 32, into), bytes.subarray(4000, 4032));
    await assert.rejects(files.read('weights.bin', 4090, 16), /weights\.bin is truncated: it ends before byte 4106/);
    await assert.rejects(files.read('missing.bin', 0, 4), /ENOENT/);
  });

  it('opens a file once for many reads, and closes it a second after the last', async function () {
    if (!existsSync('/proc/self/fd')) skipBecause(this, 'no /proc/self/fd here to count open files');
    this.timeout(10_000);
    const files = folderFiles(folder);
    const path = join(folder, 'burst.bin');
    const reads = Array.from({ length: 64 }, (_, i) => files.read('burst.bin', i * 64, 64));
    const during = descriptorsOf(path);
    const read = await Promise.all(reads);
    read.forEach((range, i) => assert.deepEqual(range, bytes.subarray(i * 64, i * 64 + 64)));
    assert.ok(during <= 1, `${during} descriptors open for one file during the reads`);
    assert.equal(descriptorsOf(path), 1, 'the file is kept open between reads that follow each other');
    await files.read('burst.bin', 0, 8);
    assert.equal(descriptorsOf(path), 1, 'a later read reuses it');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(descriptorsOf(path), 0, 'closed once idle');
  });
});
