// How the pages label a map's axes (issue 45): tokens shown as written but with a tokenizer's
// whitespace marks made visible, and the step between labels that keeps them a line apart.
import { strict as assert } from 'node:assert';
import { LABEL_PITCH, labelStep, shownToken } from '../../../src/core/words';

describe('axis labels', () => {
  it('shows tokens as written, with Ġ/▁ as ␣, Ċ and newlines as ↵, ĉ and tabs as ⇥', () => {
    assert.equal(shownToken('<s>'), '<s>');
    assert.equal(shownToken('<b>x</b>'), '<b>x</b>');
    assert.equal(shownToken('Ġcat'), '␣cat');
    assert.equal(shownToken('▁cat'), '␣cat');
    assert.equal(shownToken('ĊĊ'), '↵↵');
    assert.equal(shownToken('a\tb\n'), 'a⇥b↵');
    assert.equal(shownToken('ĉx'), '⇥x');
    // A label someone wrote with spaces keeps them; a model run's ␣ stays ␣.
    assert.equal(shownToken('New York'), 'New York');
    assert.equal(shownToken('␣the'), '␣the');
  });

  it('labels every token while each has a line, else every 1, 2 or 5 × 10ⁿ-th', () => {
    assert.equal(labelStep(LABEL_PITCH, 1), 1);
    assert.equal(labelStep(66, 1), 1);
    assert.equal(labelStep(12, 1), 2);
    assert.equal(labelStep(4, 1), 5);
    assert.equal(labelStep(2, 1), 10);
    assert.equal(labelStep(1, 1), 20);
    assert.equal(labelStep(0.2, 1), 100);
    // Every step leaves at least LABEL_PITCH px between labels, and no smaller nice step would.
    for (const pitch of [0.3, 0.7, 1, 1.5, 2.5, 3, 6, 6.5, 9, 12.9]) {
      const step = labelStep(pitch, 1);
      assert.ok(step * pitch >= LABEL_PITCH - 1e-9, `${pitch} px: every ${step}`);
    }
  });

  it('steps by whole blocks on a pooled map (a cell of 2 or 3 tokens)', () => {
    assert.equal(labelStep(13, 2), 2);
    assert.equal(labelStep(2, 2), 20); // 10 tokens are 5 cells, 10 px: too close
    // No 1/2/5 × 10ⁿ multiple of 3 fits: the least whole number of blocks that does.
    const step = labelStep(2, 3);
    assert.equal(step % 3, 0);
    assert.ok((step / 3) * 2 >= LABEL_PITCH);
    // Slanted labels ask for more room.
    assert.ok(labelStep(7, 1, LABEL_PITCH / Math.SQRT1_2) > labelStep(7, 1));
  });
});
