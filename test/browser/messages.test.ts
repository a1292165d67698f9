// The host's guard against its webviews: every message is validated before it is acted on, and
// the page's HTML allows nothing the panel does not need. Plain node (no browser).
import assert from 'node:assert/strict';
import { contentSecurityPolicy, newNonce, panelHtml } from '../../src/views/html';
import { parsePanelState, parseWebviewMessage, type PanelState } from '../../src/protocol';

const STATE: PanelState = {
  uri: 'file:///notes/a.md',
  problemIndex: 1,
  view: 'heads',
  head: 2,
  step: 'weights',
  colorScale: 'RdBu',
  showNumbers: false,
  zoom: { 'h1-weights': { rowStart: 0, rowEnd: 64, colStart: 8, colEnd: 72 } },
};

describe('webview → host message validation', () => {
  it('accepts every well-formed message as it is', () => {
    const messages = [
      { type: 'ready' },
      { type: 'exportHtml' },
      { type: 'state', state: STATE },
      { type: 'selectProblem', problemIndex: 3 },
      { type: 'run', problemIndex: 0 },
      { type: 'reveal', problemIndex: 0, head: 1, matrix: 'weights', row: 2, col: 0 },
      { type: 'requestRegion', requestId: 7, problemIndex: 0, head: 0, matrix: 'scores', rowStart: 0, rowEnd: 10, colStart: 5, colEnd: 6 },
      { type: 'export', format: 'png', fileName: 'attention-h1-weights.png', base64: 'iVBORw0KGgo=' },
      { type: 'export', format: 'svg', fileName: 'attention-h1-weights.svg', text: '<svg xmlns="http://www.w3.org/2000/svg"/>' },
      { type: 'exportMatrix', format: 'csv', problemIndex: 0, head: 1, matrix: 'dS' },
      { type: 'setDtype', dtype: 'float32' },
      { type: 'onScreen', update: 4, views: [{ head: 0, key: 'scores' }, { head: 1, key: 'givenWeights' }, { head: 0, key: 'layerOutput' }] },
      { type: 'onScreen', update: 5, views: [] },
      { type: 'requestDeferred', update: 4 },
      { type: 'requestVariants', requestId: 9, problemIndex: 0, query: { kind: 'variants', head: 1 } },
      { type: 'requestVariants', requestId: 10, problemIndex: 2, query: { kind: 'flash', head: 0, tileSide: 16, queryTile: 31 } },
    ];
    for (const message of messages) assert.deepEqual(parseWebviewMessage(message), message, message.type);
  });

  it('drops unknown fields instead of passing them on', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'selectProblem', problemIndex: 1, command: 'rm -rf' }), { type: 'selectProblem', problemIndex: 1 });
  });

  const malformed: [string, unknown][] = [
    ['not an object', 'ready'],
    ['null', null],
    ['an array', [{ type: 'ready' }]],
    ['unknown type', { type: 'runCommand', command: 'workbench.action.terminal.new' }],
    ['negative index', { type: 'selectProblem', problemIndex: -1 }],
    ['fractional index', { type: 'selectProblem', problemIndex: 0.5 }],
    ['index as a string', { type: 'reveal', problemIndex: '0', head: 0, matrix: 'weights', row: 0, col: 0 }],
    ['unknown matrix', { type: 'reveal', problemIndex: 0, head: 0, matrix: '__proto__', row: 0, col: 0 }],
    ['empty region', { type: 'requestRegion', requestId: 1, problemIndex: 0, head: 0, matrix: 'weights', rowStart: 5, rowEnd: 5, colStart: 0, colEnd: 1 }],
    ['path in a file name', { type: 'export', format: 'svg', fileName: '../../.bashrc', text: '<svg/>' }],
    ['hidden file name', { type: 'export', format: 'svg', fileName: '.profile', text: '<svg/>' }],
    ['PNG that is not base64', { type: 'export', format: 'png', fileName: 'a.png', base64: 'not base64!' }],
    ['image format for matrices', { type: 'export', format: 'csv', fileName: 'a.csv', text: '1,2' }],
    ['SVG without text', { type: 'export', format: 'svg', fileName: 'a.svg' }],
    ['unknown dtype', { type: 'setDtype', dtype: 'float16' }],
    ['variants of a negative head', { type: 'requestVariants', requestId: 1, problemIndex: 0, query: { kind: 'variants', head: -1 } }],
    ['a walk without its tile', { type: 'requestVariants', requestId: 1, problemIndex: 0, query: { kind: 'flash', head: 0, tileSide: 16 } }],
    ['a walk in tiles of 0', { type: 'requestVariants', requestId: 1, problemIndex: 0, query: { kind: 'flash', head: 0, tileSide: 0, queryTile: 0 } }],
    ['an unknown question', { type: 'requestVariants', requestId: 1, problemIndex: 0, query: { kind: 'everything', head: 0 } }],
    ['on-screen card of an unknown matrix', { type: 'onScreen', update: 1, views: [{ head: 0, key: 'constructor' }] }],
    ['on-screen card without a head', { type: 'onScreen', update: 1, views: [{ key: 'weights' }] }],
    ['on-screen cards not a list', { type: 'onScreen', update: 1, views: { head: 0, key: 'weights' } }],
    ['more on-screen cards than any view has', { type: 'onScreen', update: 1, views: Array.from({ length: 300 }, () => ({ head: 0, key: 'weights' })) }],
    ['held views of no update', { type: 'requestDeferred' }],
    ['state with an unknown view', { type: 'state', state: { ...STATE, view: 'terminal' } }],
    ['state with a bad zoom', { type: 'state', state: { ...STATE, zoom: { a: { rowStart: -1, rowEnd: 2, colStart: 0, colEnd: 1 } } } }],
  ];
  for (const [label, message] of malformed) {
    it(`rejects ${label}`, () => assert.equal(parseWebviewMessage(message), undefined));
  }

  it('restores a saved panel state, and nothing from a malformed one', () => {
    assert.deepEqual(parsePanelState(JSON.parse(JSON.stringify(STATE))), STATE);
    assert.equal(parsePanelState({ ...STATE, colorScale: 'Jet' }), undefined);
    assert.equal(parsePanelState(undefined), undefined);
  });
});

describe('webview HTML', () => {
  const html = panelHtml({
    cspSource: 'https://abc.vscode-cdn.net',
    script: 'document.body.append("</script><script>alert(1)</script>");\n//# sourceMappingURL=main.js.map',
    css: 'body { color: red; } /* </style><b>not markup</b> */',
    assetsUri: 'https://abc.vscode-cdn.net/dist/panel/',
    nonce: 'abc123',
    mode: 'panel',
    title: '<Attention & "co">',
  });

  it('allows scripts only with the nonce, styles/images/fonts only from the webview (and data:)', () => {
    assert.equal(
      contentSecurityPolicy({ nonce: 'abc123', resourceSource: 'https://abc.vscode-cdn.net' }),
      "default-src 'none'; script-src 'nonce-abc123'; style-src https://abc.vscode-cdn.net 'unsafe-inline'; img-src https://abc.vscode-cdn.net data: blob:; font-src https://abc.vscode-cdn.net data:",
    );
    // The first-paint script and the CSS are inline; nothing in them can close their element.
    assert.match(html, /<script nonce="abc123">\ndocument\.body\.append\("<\\\/script><script>alert\(1\)<\\\/script>"\);\n\n<\/script>/);
    assert.equal(html.match(/<\/script>/g)?.length, 1);
    assert.equal(html.match(/<\/style>/g)?.length, 1);
    assert.doesNotMatch(html, /sourceMappingURL/);
    assert.match(html, /<body data-mode="panel" data-assets="https:\/\/abc\.vscode-cdn\.net\/dist\/panel\/">/);
    assert.match(html, /<title>&#60;Attention &#38; &#34;co&#34;&#62;<\/title>/);
  });

  it('makes a fresh 128-bit nonce each time', () => {
    const nonces = new Set(Array.from({ length: 100 }, newNonce));
    assert.equal(nonces.size, 100);
    for (const nonce of nonces) assert.match(nonce, /^[0-9a-f]{32}$/);
  });
});
