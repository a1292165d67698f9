// Chat templates rendered as transformers renders them: each fixture folder's template
// (scripts/gen_chat_references.py writes the folders and what Python's jinja2 renders of them, set
// up as apply_chat_template sets it up) gives the same text here; a template that raises or cannot
// be read is one ModelFileError carrying the template's own message; the rendered special tokens
// are encoded as single ids.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyChatTemplate, chatPromptIds } from '../../../src/core/model/chatTemplate';
import { ModelTokenizer } from '../../../src/core/model/tokenizer';
import { ModelFileError } from '../../../src/core/model/weights';
import { folderFiles } from '../../../src/node/modelFiles';

const root = join(__dirname, '..', '..', 'fixtures', 'chat');
interface References {
  messages: string[];
  folders: Record<string, ({ text: string } | { error: string })[]>;
}
const references = JSON.parse(readFileSync(join(root, 'references.json'), 'utf8')) as References;

describe('chat templates', () => {
  for (const [folder, rendered] of Object.entries(references.folders)) {
    it(`${folder}: as jinja2 renders it for each message`, async () => {
      for (const [index, message] of references.messages.entries()) {
        const expected = rendered[index];
        const files = folderFiles(join(root, folder));
        if ('text' in expected) assert.equal(await applyChatTemplate(files, message), expected.text, JSON.stringify(message));
        else await assert.rejects(applyChatTemplate(files, message), (error: Error) => error instanceof ModelFileError && error.message.endsWith(`the chat template fails: ${expected.error}`));
      }
    });
  }

  describe('folders the template cannot come from', () => {
    let scratch: string;
    beforeEach(() => (scratch = mkdtempSync(join(tmpdir(), 'attention-lens-chat-'))));
    afterEach(() => rmSync(scratch, { recursive: true, force: true }));
    const config = (json: unknown) => writeFileSync(join(scratch, 'tokenizer_config.json'), JSON.stringify(json));

    it('no template: one line saying so', async () => {
      config({ eos_token: '</s>' });
      await assert.rejects(applyChatTemplate(folderFiles(scratch), 'hi'), (error: Error) => error instanceof ModelFileError && /has no chat template/.test(error.message) && !error.message.includes('\n'));
      rmSync(join(scratch, 'tokenizer_config.json'));
      await assert.rejects(applyChatTemplate(folderFiles(scratch), 'hi'), /has no chat template/);
    });

    it('named templates without a "default": the names it has', async () => {
      config({ chat_template: [{ name: 'tool_use', template: '{{ tools }}' }, { name: 'rag', template: '{{ documents }}' }] });
      await assert.rejects(applyChatTemplate(folderFiles(scratch), 'hi'), /several chat templates \(tool_use, rag\) and none named "default"/);
    });

    it('a template that does not parse: the parser says why', async () => {
      config({ chat_template: '{% for message in messages %}{{ message.content }' });
      await assert.rejects(applyChatTemplate(folderFiles(scratch), 'hi'), (error: Error) => error instanceof ModelFileError && /the chat template cannot be read: \S/.test(error.message));
    });
  });

  describe('the rendered special tokens as single ids', () => {
    it('ChatML: <|im_start|> and <|im_end|> are one added token each, the rest a byte each', async () => {
      const files = folderFiles(join(root, 'chatml'));
      const tokenizer = (await ModelTokenizer.open(files)) as ModelTokenizer;
      const text = await applyChatTemplate(files, 'hi');
      const ids = await chatPromptIds(files, 'hi');
      const start = tokenizer.idOf('<|im_start|>');
      const end = tokenizer.idOf('<|im_end|>');
      assert.deepEqual(ids.filter((id) => id === start).length, 2);
      assert.deepEqual(ids.filter((id) => id === end).length, 1);
      const ordinary = text.replaceAll('<|im_start|>', '').replaceAll('<|im_end|>', '');
      assert.equal(ids.length, 3 + new TextEncoder().encode(ordinary).length);
      assert.equal(tokenizer.label(start as number), '<|im_start|>', 'shown as written');
    });

    it('Llama-3 headers: the template writes <|begin_of_text|>, and the tokenizer does not add it again', async () => {
      const files = folderFiles(join(root, 'headers'));
      const tokenizer = (await ModelTokenizer.open(files)) as ModelTokenizer;
      const bos = tokenizer.idOf('<|begin_of_text|>');
      assert.equal(tokenizer.encode('x').ids[0], bos, 'the post-processor adds it to plain text');
      const ids = await chatPromptIds(files, 'hi');
      assert.deepEqual(ids.filter((id) => id === bos), [bos]);
      assert.equal(ids[0], bos);
      const labels = ids.map((id) => tokenizer.label(id));
      const count = (special: string) => labels.filter((label) => label === special).length;
      assert.deepEqual([count('<|start_header_id|>'), count('<|end_header_id|>'), count('<|eot_id|>')], [3, 3, 2], 'system, user and assistant headers; two turns ended');
    });
  });
});
