// Loaded first by the child mocha of kernel-builds.test.ts (`--require`): the fast path's tests that
// follow must run on the 128-bit SIMD build (attention.wasm), or the child fails before any of them.
require('tsx/cjs');
const { kernelsFlavour } = require('../../../src/core/engine/fast/pool.ts');

if (kernelsFlavour() !== 'simd128') throw new Error('the 128-bit SIMD build was not taken: start this Node with ATTENTION_LENS_KERNELS=simd128');
