// The directive editing behind `Attention: Set Options…`: every comment style and JSON, exact
// text, and properties over random directives (the key ends up exactly once with its value,
// every other word is kept in order, the comment around it is untouched).
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { argumentSpan, directiveWords, hasDirectiveKey, withDirectiveWord } from '../../../src/features/directive';

describe('directive editing', () => {
  const cases: [string, string, string | undefined, string][] = [
    ['<!-- attention: name="Two heads" heads=2 -->', 'causal', 'causal=bottom-right', '<!-- attention: name="Two heads" heads=2 causal=bottom-right -->'],
    ['<!-- attention: name="Two heads" heads=2 -->', 'heads', 'heads=4', '<!-- attention: name="Two heads" heads=4 -->'],
    ['<!-- attention: name="Two heads" heads=2 -->', 'name', undefined, '<!-- attention: heads=2 -->'],
    ['# attention: grad heads=2', 'gradients', undefined, '# attention: heads=2'],
    ['# attention: gradients', 'grad', 'grad', '# attention: grad'],
    ['% attention:', 'heads', 'heads=3', '% attention: heads=3'],
    ['/* attention: heads=2 */', 'scale', 'scale=0.5', '/* attention: heads=2 scale=0.5 */'],
    ['attention: heads=2 heads=3', 'heads', 'heads=1', 'attention: heads=1'],
    ['  "attention": "heads=2 causal",', 'name', 'name="a b"', `  "attention": "heads=2 causal name='a b'",`],
    ['{"attention": "heads=2 causal", "X": 1}', 'causal', undefined, '{"attention": "heads=2", "X": 1}'],
  ];
  for (const [text, key, word, expected] of cases) {
    it(`${JSON.stringify(text)}: ${key} → ${word ?? '(removed)'}`, () => {
      assert.equal(withDirectiveWord(text, key, word), expected);
    });
  }

  it('reads quoted words with spaces as one word', () => {
    assert.deepEqual(
      directiveWords('# attention: name="a b" causal dtype=float32').map(({ key, value }) => [key, value]),
      [['name', '"a b"'], ['causal', undefined], ['dtype', 'float32']],
    );
    assert.equal(hasDirectiveKey('# attention: name="dtype=float32"', 'dtype'), false);
  });

  it('text without a directive is left alone', () => {
    assert.equal(argumentSpan('X = [[1, 2]]'), undefined);
    assert.equal(withDirectiveWord('X = [[1, 2]]', 'heads', 'heads=2'), 'X = [[1, 2]]');
  });

  const keyName = fc.constantFrom('heads', 'kv_heads', 'scale', 'score', 'causal', 'dtype', 'residual');
  const simpleWord = fc.tuple(keyName, fc.option(fc.stringMatching(/^[a-z0-9.-]{1,6}$/), { nil: undefined }));
  const wrapper = fc.constantFrom(['<!-- ', ' -->'], ['# ', ''], ['% ', ''], ['// ', ''], ['/* ', ' */'], ['', '']);

  it('property: the key is there exactly once with its new value, every other word kept in order', () => {
    fc.assert(
      fc.property(fc.array(simpleWord, { maxLength: 6 }), keyName, fc.stringMatching(/^[a-z0-9.]{1,5}$/), wrapper, (words, key, value, [open, close]) => {
        const text = `${open}attention: ${words.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(' ')}${close}`;
        const edited = withDirectiveWord(text, key, `${key}=${value}`);
        assert.ok(edited.startsWith(open) && edited.endsWith(close), edited);
        const after = directiveWords(edited).map(({ key: k, value: v }) => [k, v]);
        assert.deepEqual(after.filter(([k]) => k === key), [[key, value]]);
        assert.deepEqual(
          after.filter(([k]) => k !== key),
          words.filter(([k]) => k !== key).map(([k, v]) => [k, v]),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('property: removing a key leaves no trace of it', () => {
    fc.assert(
      fc.property(fc.array(simpleWord, { maxLength: 6 }), keyName, wrapper, (words, key, [open, close]) => {
        const text = `${open}attention: ${words.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(' ')}${close}`;
        const edited = withDirectiveWord(text, key, undefined);
        assert.equal(hasDirectiveKey(edited, key), false, edited);
        assert.equal(directiveWords(edited).length, words.filter(([k]) => k !== key).length);
      }),
      { numRuns: 500 },
    );
  });
});
