// Runs src/worker/main.ts in a worker thread straight from the sources (through tsx), so the
// worker tests need no build.
require('tsx/cjs');
require('../../../src/worker/main.ts');
