import { readNpy } from './npy';
import { BYTES_PER_ELEMENT, type ElementBudget, type Tensor } from './tensor';
import { unzipMembers } from './zip';

// NumPy's .npz: a zip of .npy members (stored by `numpy.savez`, deflated by
// `numpy.savez_compressed`), one per keyword; the key is the member name without `.npy`.

export function readNpz(bytes: Uint8Array, where: string, budget: ElementBudget, maxElements: number): Tensor[] {
  // A member's bytes are at most its numbers times the widest dtype, plus a header.
  const maxBytes = maxElements * BYTES_PER_ELEMENT.float64 + 64 * 1024;
  const members = unzipMembers(bytes, where, maxBytes, (name) => name.endsWith('.npy'), budget.limits.viewsOnFile);
  return [...members].map(([name, member]) => {
    const key = name.slice(0, -'.npy'.length);
    return readNpy(member, key, budget, `${where}[${JSON.stringify(key)}]`);
  });
}
