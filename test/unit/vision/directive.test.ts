// The vision directive: `<!-- attention: model="models/vit" image="cat.png" -->` pins a vision
// folder and a picture (both relative to the note); an image without a model is said.
import { strict as assert } from 'node:assert';
import { parseDocument } from '../../../src/core/parse/index';

describe('the vision model directive', () => {
  it('pins a vision folder and a picture', () => {
    const { problems, diagnostics } = parseDocument('# notes\n<!-- attention: model="models/vit" image="cat.png" -->\n');
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(problems[0].model, { path: 'models/vit', image: 'cat.png' });
  });

  it('says an image needs a model, and an empty image a file', () => {
    assert.match(parseDocument('<!-- attention: image="cat.png" -->\n').diagnostics.map((d) => d.message).join('\n'), /`image` are the input of a model/);
    assert.match(parseDocument('<!-- attention: model=m image="" -->\n').diagnostics.map((d) => d.message).join('\n'), /`image` needs a picture file/);
  });
});
