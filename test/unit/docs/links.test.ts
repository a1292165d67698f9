// Every relative link of the documentation resolves: the file exists, and a `#anchor` names a
// heading of that file by GitHub's rules (github-slugger, as github.com renders Markdown). The
// links are read by a Markdown parser, so links in code are not links and images are.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const markdown = new MarkdownIt({ html: true });

function flatten(tokens: Token[]): Token[] {
  return tokens.flatMap((token) => [token, ...flatten(token.children ?? [])]);
}

/** The anchors GitHub gives a Markdown file's headings (repeats numbered -1, -2… as GitHub does). */
function anchorsOf(file: string): Set<string> {
  const tokens = markdown.parse(readFileSync(file, 'utf8'), {});
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const text = flatten(tokens[i + 1].children ?? []).filter((t) => t.type === 'text' || t.type === 'code_inline').map((t) => t.content).join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

/** The links of `file` (hrefs and image sources) that point nowhere, with why. */
function brokenLinks(file: string): string[] {
  const targets = flatten(markdown.parse(readFileSync(file, 'utf8'), {}))
    .map((token) => (token.type === 'link_open' ? token.attrGet('href') : token.type === 'image' ? token.attrGet('src') : null))
    .filter((target): target is string => target !== null && !/^[a-z][a-z0-9+.-]*:/i.test(target));
  const broken: string[] = [];
  for (const target of targets) {
    const [pathPart, anchor] = target.split('#', 2);
    const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
    if (!existsSync(resolved)) {
      broken.push(`${target}: no file ${path.relative(ROOT, resolved)}`);
    } else if (anchor !== undefined && !(statSync(resolved).isFile() && resolved.endsWith('.md') && anchorsOf(resolved).has(decodeURIComponent(anchor)))) {
      broken.push(`${target}: no heading #${anchor} in ${path.relative(ROOT, resolved)}`);
    }
  }
  return broken;
}

const documentation = [
  'README.md',
  'CHANGELOG.md',
  'examples/README.md',
  ...readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
];

describe('documentation links', () => {
  for (const file of documentation) {
    it(`every relative link of ${file} resolves`, () => {
      assert.deepEqual(brokenLinks(path.join(ROOT, file)), []);
    });
  }

  it('README links every page of docs/', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const file of documentation.filter((name) => name.startsWith('docs/'))) assert.ok(readme.includes(`](${file}`), `README.md does not link ${file}`);
  });

  it('finds a missing file, a missing heading and a heading GitHub numbers, and reads no link in code', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'links-'));
    writeFileSync(path.join(folder, 'other.md'), '# Setup & use: `npm ci`\n\n## Notes\n\n## Notes\n');
    const page = path.join(folder, 'page.md');
    writeFileSync(page, [
      '# Page',
      '[ok](other.md#setup--use-npm-ci) [second notes](other.md#notes-1) [self](#page) [web](https://example.com/x.md)',
      '[gone](missing.md) [no heading](other.md#usage) [third notes](other.md#notes-2) ![picture](img/none.png)',
      '`[in code](nowhere.md)`',
      '```',
      '[in a block](nowhere.md)',
      '```',
    ].join('\n'));
    assert.deepEqual(brokenLinks(page), [
      'missing.md: no file ' + path.relative(ROOT, path.join(folder, 'missing.md')),
      'other.md#usage: no heading #usage in ' + path.relative(ROOT, path.join(folder, 'other.md')),
      'other.md#notes-2: no heading #notes-2 in ' + path.relative(ROOT, path.join(folder, 'other.md')),
      'img/none.png: no file ' + path.relative(ROOT, path.join(folder, 'img', 'none.png')),
    ]);
  });
});
