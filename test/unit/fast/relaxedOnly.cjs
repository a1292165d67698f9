// Loaded first by the child mocha of relaxed-simd.test.ts (`--require`): the fast path's tests that
// follow must run on attention-relaxed.wasm, or the child fails before any of them.
require('tsx/cjs');
const { kernelsFlavour } = require('../../../src/core/engine/fast/pool.ts');

if (kernelsFlavour() !== 'relaxed') throw new Error('this Node does not run attention-relaxed.wasm: start it with --experimental-wasm-relaxed-simd');
