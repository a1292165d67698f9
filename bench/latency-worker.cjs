// The extension's engine worker (src/worker/main.ts) loaded from the sources through tsx, so
// bench/latency.ts measures the real worker without a build.
require('tsx/cjs');
require('../src/worker/main.ts');
