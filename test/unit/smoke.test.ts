import * as assert from 'node:assert/strict';
describe('smoke', () => { it('runs', () => { const x: number = 1; assert.equal(x, 1); }); });
