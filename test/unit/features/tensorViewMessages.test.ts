// Messages from the tensor file view are untrusted: only well-formed ones reach the host.
import * as assert from 'node:assert/strict';
import { parseTensorViewMessage } from '../../../src/protocol';

describe('tensor view messages', () => {
  it('accepts ready and a well-formed showAttention, keeping only its fields', () => {
    assert.deepEqual(parseTensorViewMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(parseTensorViewMessage({ type: 'showAttention', layer: 1, input: 'tensor:x', heads: 2, extra: 'rm -rf' }), { type: 'showAttention', layer: 1, input: 'tensor:x', heads: 2 });
  });

  it('a vision folder runs on an offered picture by its index, or null to ask: never a path from the page', () => {
    assert.deepEqual(parseTensorViewMessage({ type: 'runModelOnImage', picture: 2 }), { type: 'runModelOnImage', picture: 2 });
    assert.deepEqual(parseTensorViewMessage({ type: 'runModelOnImage', picture: null, path: '/etc/passwd' }), { type: 'runModelOnImage', picture: null });
  });

  it('refuses anything else', () => {
    for (const raw of [
      null,
      'ready',
      { type: 'run' },
      { type: 'showAttention', layer: -1, input: 'tensor:x', heads: 2 },
      { type: 'showAttention', layer: 0, input: 7, heads: 2 },
      { type: 'showAttention', layer: 0, input: 'x'.repeat(5000), heads: 2 },
      { type: 'showAttention', layer: 0, input: 'tensor:x', heads: 0 },
      { type: 'showAttention', layer: 0.5, input: 'tensor:x', heads: 1 },
      { type: 'runModelOnImage', picture: '/etc/passwd' },
      { type: 'runModelOnImage', picture: -1 },
      { type: 'runModelOnImage' },
    ]) assert.equal(parseTensorViewMessage(raw), undefined, JSON.stringify(raw)?.slice(0, 80));
  });
});
