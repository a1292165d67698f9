/** A float32 C-order .npy of rows×cols zeros (version 1, 128-byte header), and its values to fill. */
export function npyBytes(rows: number, cols: number): { bytes: Uint8Array; values: Float32Array } {
  const header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`.padEnd(117, ' ') + '\n';
  const bytes = new Uint8Array(10 + header.length + rows * cols * 4);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length, 0]);
  bytes.set(new TextEncoder().encode(header), 10);
  return { bytes, values: new Float32Array(bytes.buffer, 128, rows * cols) };
}
