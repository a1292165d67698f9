// An encoder–decoder run's kinds of attention on the heads page: the Encoder / Decoder / Cross
// selector, the page's view of the chosen kind (its tokens per axis and counts, as the worker
// described it: StackInfo's `kinds`), and the kind named in every question the page then asks.
// The views draw whatever kind they are given; none of them knows model families.
import type { AttentionKind, HeadsQuery, HeadsViewToHost, StackInfo } from '../../src/protocol';
import { infoOfKind as kindView } from '../../src/views/kindInfo';
import { element } from './page';

const KIND_TITLES: Record<AttentionKind, string> = { encoder: 'Encoder', decoder: 'Decoder', cross: 'Cross' };
const KIND_HINTS: Record<AttentionKind, string> = {
  encoder: 'the encoder’s self-attention: source tokens attend to source tokens',
  decoder: 'the decoder’s causal self-attention: target tokens attend to the target tokens before them',
  cross: 'cross-attention: each target token (row, query) attends to the source tokens (columns, keys)',
};

/** What a map's rows and columns are, in words: the query and key tokens of a kind. */
export function axisNames(info: StackInfo): { rows: string; cols: string } {
  if (info.kind === 'cross') return { rows: 'target', cols: 'source' };
  if (info.kind === 'encoder') return { rows: 'source query', cols: 'source key' };
  if (info.kind === 'decoder') return { rows: 'target query', cols: 'target key' };
  return { rows: 'query', cols: 'key' };
}

/** The run's own title of each kind's view made here (a view's title names its kind). */
const runTitles = new WeakMap<StackInfo, string>();

/** The page's view of one kind of `info`'s run (the info itself when it has one kind); its title
 * names the kind, so the exports' file names and headings do. `info` may be another kind's view. */
export function infoOfKind(info: StackInfo, kind: AttentionKind | undefined): StackInfo {
  const runTitle = runTitles.get(info) ?? info.title;
  const view = kindView({ ...info, title: runTitle }, kind);
  if (view.title === runTitle) return info;
  runTitles.set(view, runTitle);
  return view;
}

/** A question about the page's kind, unless it names one itself (the alignment view asks for cross). */
export function askingKind(query: HeadsQuery, kind: AttentionKind | undefined): HeadsQuery {
  return kind === undefined || query.attention !== undefined ? query : { ...query, attention: kind };
}

/** A message to the host about the page's kind: its questions and the heads it opens. */
export function postingKind(message: HeadsViewToHost, kind: AttentionKind | undefined): HeadsViewToHost {
  if (kind === undefined) return message;
  if (message.type === 'query') return { ...message, query: askingKind(message.query, kind) };
  if ((message.type === 'openHead' || message.type === 'report') && message.attention === undefined) return { ...message, attention: kind };
  return message;
}

/** The Encoder / Decoder / Cross buttons of a run with several kinds (undefined for one kind). */
export function kindSelector(info: StackInfo, shown: AttentionKind | undefined, choose: (kind: AttentionKind) => void): HTMLElement | undefined {
  if (!info.kinds || info.kinds.length < 2) return undefined;
  const box = element('div', undefined, { class: 'controls', id: 'heads-kinds', role: 'radiogroup', 'aria-label': 'Kind of attention' });
  box.append(element('span', 'Attention: '));
  for (const { kind, layerCount, headCount, queryCount, keyCount } of info.kinds) {
    const button = element('button', KIND_TITLES[kind], {
      role: 'radio',
      'data-kind': kind,
      'aria-checked': String(kind === shown),
      title: `${KIND_HINTS[kind]} (${layerCount} layers × ${headCount} heads, ${queryCount} × ${keyCount})`,
    });
    button.addEventListener('click', () => kind !== shown && choose(kind));
    box.append(button);
  }
  if (shown) box.append(element('span', KIND_HINTS[shown], { class: 'meta', id: 'heads-kind-hint' }));
  return box;
}
