// Results travel from the worker to the host without a copy: a matrix on an ArrayBuffer (the
// reference engine's, a residual) is transferred with the message; one on a fast run's shared
// WebAssembly memory is shared, and the worker never writes that memory again (main.ts). A
// buffer may back several views, and a transfer list must not name one twice, so buffers are
// collected in a set.

export function transferablesOf(value: unknown): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  collect(value, buffers, new Set());
  return [...buffers];
}

function collect(value: unknown, buffers: Set<ArrayBuffer>, seen: Set<object>): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (ArrayBuffer.isView(value)) {
    // SharedArrayBuffers are shared, not transferred.
    if (value.buffer instanceof ArrayBuffer) buffers.add(value.buffer);
    return;
  }
  for (const child of Object.values(value)) collect(child, buffers, seen);
}
