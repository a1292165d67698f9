// Root hooks of the browser suite: the run's one Chromium (test/browser/harness.ts) closes after
// the last test.
import { closeChromium } from './harness';

export const mochaHooks = { afterAll: closeChromium };
