// Central finite differences of a scalar loss against analytic gradients, entry by entry.
import * as assert from 'node:assert/strict';
import type { Matrix } from '../../../src/core/types';

/** Each target: a name, the input matrix (nudged in place and restored), its analytic gradient. */
export function assertFiniteDifferences(targets: Array<[string, Matrix | undefined, Matrix | undefined]>, loss: () => number, context = ''): void {
  const step = 1e-5;
  for (const [name, input, gradient] of targets) {
    if (!input) continue;
    assert.ok(gradient, `no gradient for ${name}`);
    for (let p = 0; p < input.data.length; p++) {
      const original = input.data[p];
      input.data[p] = original + step;
      const up = loss();
      input.data[p] = original - step;
      const down = loss();
      input.data[p] = original;
      const numeric = (up - down) / (2 * step);
      const analytic = gradient.data[p];
      assert.ok(Math.abs(numeric - analytic) <= 1e-6 * (1 + Math.abs(numeric)), `d${name}[${p}]: analytic ${analytic}, finite difference ${numeric}${context}`);
    }
  }
}
