// The tests' keyboard in code-server: an extension test cannot type into VS Code's own quick
// input (the `type` command reaches editors only, and the web's paste is a no-op), so the host
// that holds the Chromium page types for it. A test POSTs {title, text} to the URL in
// ATTENTION_LENS_TEST_KEYBOARD (test/integration/support.ts typeInQuickInput): the host waits for
// a visible quick input whose title contains `title`, selects what it holds, types `text` into it
// key by key, presses Enter, and answers 200 — or 500 with why.
import { createServer } from 'node:http';

/** Starts the keyboard on 127.0.0.1; `page()` gives the workbench's page once it is open. */
export async function startKeyboard(page) {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', async () => {
      try {
        const { title, text } = JSON.parse(body);
        const widget = page().locator('.quick-input-widget').filter({ has: page().locator('.quick-input-title', { hasText: title }) });
        const input = widget.locator('.quick-input-box input');
        await input.waitFor({ state: 'visible', timeout: 30_000 });
        // The box has the focus once shown: the page's keyboard types into it. A locator's press
        // focuses the element first, and after that a later test's input box closed when its heads
        // page took the focus (generate.test.ts's palette test failed 2 runs in 4; 0 in 6 without).
        const keyboard = page().keyboard;
        await keyboard.press('ControlOrMeta+a'); // what the box holds is replaced, as a person selecting it would
        await keyboard.type(text);
        await keyboard.press('Enter');
        response.writeHead(200).end();
      } catch (error) {
        response.writeHead(500).end(error instanceof Error ? error.message : String(error));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}
