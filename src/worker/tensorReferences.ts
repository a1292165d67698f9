// The tensors a text loads (`X = np.load("acts.npy")`), read here as part of the text's reading:
// files are found relative to the text's folder, read and decoded on this thread, and their
// matrices go to the host on shared memory like the text's own — the host never loads tensor
// bytes. The last few decoded files are kept while their modification time and size stay the same,
// so typing in the text does not read them again; a file that changed on disk is read anew.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { allocate } from '../core/parse/matrixBuilder';
import { readTensorFile, type TensorFile } from '../core/parse/tensors';
import { hasReferences, resolveReferences } from '../core/parse/tensors/resolve';
import { buildSpec } from '../core/spec';
import { matrixStatistics } from '../core/statistics';
import type { MatrixDef } from '../core/types';
import type { WorkerReading } from '../protocol';

/** Decoded files kept for the texts that load them (the least recently used go first). */
const KEPT_FILES = 8;

export class TensorReferenceFiles {
  private readonly cache = new Map<string, { version: string; file: TensorFile }>();

  /**
   * The reading with the tensors its text loads resolved, and the specs and hover statistics of
   * the problems that load them built again; unchanged when it loads none. `folder` is the text's
   * folder, `maxElements` the host's attentionLens.maxMatrixElements.
   */
  async resolve(reading: WorkerReading, folder: string, maxElements: number): Promise<WorkerReading> {
    if (!hasReferences(reading.parse)) return reading;
    const loaded: string[] = [];
    const parse = await resolveReferences(reading.parse, async (file) => {
      const absolute = isAbsolute(file) ? file : join(folder, file);
      loaded.push(absolute);
      return this.load(absolute, maxElements);
    });
    const loads = (index: number) => reading.parse.problems[index].references !== undefined;
    for (const problem of parse.problems) problem.matrices = problem.matrices.map(onSharedMemory);
    const specs = reading.specs.map((spec, index) => (loads(index) ? buildSpec(parse.problems[index]) : spec));
    const statistics = reading.statistics.map((known, index) => (loads(index) ? parse.problems[index].matrices.map((def) => matrixStatistics(def.value.data)) : known));
    return { ...reading, parse, specs, statistics, tensorFiles: [...new Set(loaded)] };
  }

  private load(absolute: string, maxElements: number): TensorFile {
    const { mtimeMs, size } = statSync(absolute);
    const version = `${mtimeMs}:${size}:${maxElements}`;
    const cached = this.cache.get(absolute);
    this.cache.delete(absolute); // re-inserted last: the map's order is the order of use
    if (cached?.version === version) {
      this.cache.set(absolute, cached);
      return cached.file;
    }
    const file = readTensorFile(absolute, readFileSync(absolute), { maxElements });
    this.cache.set(absolute, { version, file });
    if (this.cache.size > KEPT_FILES) this.cache.delete(this.cache.keys().next().value as string);
    return file;
  }
}

/** A matrix read from a tensor file, moved to shared memory (when large enough to be worth it)
 * so that posting the reading copies none of it; a matrix of the text is already there. */
function onSharedMemory(def: MatrixDef): MatrixDef {
  if (def.source?.kind !== 'tensor') return def;
  const { data } = def.value;
  const shared = new Float64Array(allocate(data.length * Float64Array.BYTES_PER_ELEMENT, true));
  shared.set(data);
  return { ...def, value: { ...def.value, data: shared } };
}
