// The panel's data: a result is turned into the views the webview draws once, however often the
// session posts it. The session sends only "stale" while the result it posted last is the very same
// view; a fresh object per refresh resent and redrew the old result on every keystroke.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAttention } from '../../../src/core/engine';
import { parseDocument } from '../../../src/core/parse';
import { buildSpec } from '../../../src/core/spec';
import { panelDataOf } from '../../../src/views/model';

const root = join(__dirname, '..', '..', '..');

describe('panel data', () => {
  it('gives the very same views of one result on every refresh, FlashAttention views included', () => {
    const [problem] = parseDocument(readFileSync(join(root, 'examples', '01-worked-example.md'), 'utf8')).problems;
    const { spec } = buildSpec(problem);
    assert.ok(spec);
    const result = runAttention(spec);
    const source = { uri: 'file:///note.md', fileName: 'note.md', problems: [problem], problemIndex: 0, result };
    const first = panelDataOf(source);
    assert.ok(first.result?.flash?.length, 'a small problem carries the FlashAttention views');
    assert.equal(panelDataOf(source).result, first.result);
  });
});
