import type { Diagnostic, MatrixDef, ParseResult, Problem, TensorReference } from '../../types';
import { readTensorFile } from './index';
import { tensorMatrix, transpose } from './roles';
import { DEFAULT_LIMITS, type Tensor, type TensorFile, type TensorLimits, TensorReadError } from './tensor';

// Turns the tensor references a text names (`X = np.load("acts.npy")`) into matrices, through a
// loader the front end supplies (the CLI reads the disk; the extension asks its worker), so the
// core does no IO. A reference that cannot be read becomes an error at its range, and its problem
// waits for it like one with a broken literal.

/** Reads the tensor file a text names, as written there (relative to the text's folder). */
export type TensorFileLoader = (file: string) => Promise<TensorFile>;

/** A loader over a byte-reading function, reading each file once. */
export function tensorFileLoader(readBytes: (file: string) => Promise<Uint8Array>, limits: TensorLimits = DEFAULT_LIMITS): TensorFileLoader {
  const files = new Map<string, Promise<TensorFile>>();
  return (file) => {
    let loaded = files.get(file);
    if (!loaded) files.set(file, (loaded = readBytes(file).then((bytes) => readTensorFile(file, bytes, limits))));
    return loaded;
  };
}

export function hasReferences(parse: ParseResult): boolean {
  return parse.problems.some((problem) => (problem.references?.length ?? 0) > 0);
}

export async function resolveReferences(parse: ParseResult, load: TensorFileLoader): Promise<ParseResult> {
  if (!hasReferences(parse)) return parse;
  const diagnostics: Diagnostic[] = [];
  const problems = await Promise.all(
    parse.problems.map(async (problem): Promise<Problem> => {
      if (!problem.references) return problem;
      const { references, ...rest } = problem;
      const resolved: Problem = { ...rest, matrices: [...problem.matrices] };
      for (const reference of references) {
        const matrix = await resolveOne(reference, load);
        if (typeof matrix === 'string') {
          diagnostics.push({ range: reference.range, severity: 'error', code: 'tensor-reference', message: matrix });
          (resolved.unreadable ??= []).push({ name: reference.name, role: reference.role, range: reference.range });
        } else resolved.matrices.push(matrix);
      }
      return resolved;
    }),
  );
  return { problems, diagnostics: [...parse.diagnostics, ...diagnostics] };
}

async function resolveOne(reference: TensorReference, load: TensorFileLoader): Promise<MatrixDef | string> {
  let file: TensorFile;
  try {
    file = await load(reference.file);
  } catch (error) {
    if (error instanceof TensorReadError) return `${reference.name}: ${error.message}`;
    const code = (error as { code?: string }).code;
    return `${reference.name}: cannot read ${reference.file}${code === 'ENOENT' || code === 'FileNotFound' ? ': no such file next to this one' : `: ${error instanceof Error ? error.message : String(error)}`}.`;
  }
  const tensor = pick(file.tensors, reference);
  if (typeof tensor === 'string') return tensor;
  const matrix = tensorMatrix(tensor);
  if (typeof matrix === 'string') return `${reference.name}: ${matrix}`;
  const value = reference.transpose ? transpose(matrix) : matrix;
  return {
    name: reference.name,
    role: reference.role,
    ...(reference.head !== undefined ? { head: reference.head } : {}),
    value,
    boolean: tensor.dtype === 'bool',
    nameRange: reference.nameRange,
    range: reference.range,
    cellOffsets: new Uint32Array(0),
    source: { kind: 'tensor', file: reference.file, key: tensor.key },
  };
}

function pick(tensors: readonly Tensor[], reference: TensorReference): Tensor | string {
  const keys = tensors.map((tensor) => tensor.key);
  const listed = `${keys.slice(0, 8).map((key) => JSON.stringify(key)).join(', ')}${keys.length > 8 ? `, … (${keys.length} in all)` : ''}`;
  if (reference.key === undefined) {
    if (tensors.length === 1) return tensors[0];
    return `${reference.name}: ${reference.file} holds ${tensors.length} tensors; name one, e.g. ${reference.file}[${JSON.stringify(keys[0])}]. It has ${listed}.`;
  }
  // A .npy read whole, then subscripted like an .npz member: `np.load("a.npy")` has one tensor.
  const found = tensors.find((tensor) => tensor.key === reference.key);
  return found ?? `${reference.name}: ${reference.file} has no tensor ${JSON.stringify(reference.key)}; it has ${listed}.`;
}
