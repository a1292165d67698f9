// When an edited document is read again: at once while reading is cheap, after twice its last
// read (capped) when it is not, and always after the user's `attentionLens.debounceMs` when set.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CHEAP_READ_MS, MAX_READ_DELAY_MS, readDelay } from '../../../src/features/readDelay';

describe('read delay after an edit', () => {
  it('reads a cheap document, or one never read, at once', () => {
    assert.equal(readDelay(undefined, undefined), 0);
    assert.equal(readDelay(0.4, undefined), 0);
    assert.equal(readDelay(CHEAP_READ_MS - 0.01, undefined), 0);
  });

  it('waits twice the last read of a costly document, at most the cap', () => {
    assert.equal(readDelay(CHEAP_READ_MS, undefined), 2 * CHEAP_READ_MS);
    assert.equal(readDelay(40.2, undefined), 81);
    assert.equal(readDelay(10_000, undefined), MAX_READ_DELAY_MS);
  });

  it('waits what the user set, cheap document or not', () => {
    fc.assert(fc.property(fc.option(fc.double({ min: 0, max: 1e5, noNaN: true }), { nil: undefined }), fc.integer({ min: 0, max: 5000 }), (lastReadMs, debounceMs) => {
      assert.equal(readDelay(lastReadMs, debounceMs), debounceMs);
    }));
  });

  it('never waits longer than the cap, nor less for a costlier read, without a setting', () => {
    fc.assert(fc.property(fc.double({ min: 0, max: 1e5, noNaN: true }), fc.double({ min: 0, max: 1e5, noNaN: true }), (a, b) => {
      const [cheaper, costlier] = a <= b ? [a, b] : [b, a];
      assert.ok(readDelay(costlier, undefined) <= MAX_READ_DELAY_MS);
      assert.ok(readDelay(cheaper, undefined) <= readDelay(costlier, undefined));
    }));
  });
});
