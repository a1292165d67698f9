// What every view of the heads page shares: the host connection, requests answered by id, and
// small DOM helpers. Views never talk to the host but through this.
import { shownToken } from '../../src/core/words';
import type { HeadsAnswer, HeadsQuery, HeadsViewToHost, HostToHeadsView, StackInfo } from '../../src/protocol';

interface VsCodeApi {
  postMessage(message: HeadsViewToHost): void;
}
declare const acquireVsCodeApi: () => VsCodeApi;

export interface HeadsPage {
  info: StackInfo;
  post(message: HeadsViewToHost): void;
  /** Asks the worker (through the host); a newer ask under the same `slot` makes this one's answer be dropped. */
  ask(query: HeadsQuery, slot: string): Promise<HeadsAnswer | undefined>;
  openHead(layer: number, head: number): void;
  status(text: string): void;
}

export function connect(onMessage: (message: HostToHeadsView) => void): { post(message: HeadsViewToHost): void; ask(query: HeadsQuery, slot: string): Promise<HeadsAnswer | undefined> } {
  const api = acquireVsCodeApi();
  const waiting = new Map<number, { slot: string; resolve(answer: HeadsAnswer | undefined): void }>();
  const latest = new Map<string, number>();
  let nextRequest = 1;
  window.addEventListener('message', (event: MessageEvent<HostToHeadsView>) => {
    const message = event.data;
    if ((message.type === 'answer' || message.type === 'error') && message.requestId !== undefined) {
      const pending = waiting.get(message.requestId);
      waiting.delete(message.requestId);
      const current = pending && latest.get(pending.slot) === message.requestId;
      if (message.type === 'answer') pending?.resolve(current ? message.answer : undefined);
      else pending?.resolve(undefined);
      // An answer to a request the page did not make is a plugin's (plugins.ts): passed on.
      if (message.type === 'answer' && pending) return;
    }
    onMessage(message);
  });
  return {
    post: (message) => api.postMessage(message),
    ask(query, slot) {
      const requestId = nextRequest++;
      latest.set(slot, requestId);
      const answer = new Promise<HeadsAnswer | undefined>((resolve) => waiting.set(requestId, { slot, resolve }));
      api.postMessage({ type: 'query', requestId, query });
      return answer;
    },
  };
}

export function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

export function labelled(text: string, control: HTMLElement): HTMLLabelElement {
  const label = element('label', text);
  label.append(control);
  return label;
}

/** "0-3, 7" → [0, 1, 2, 3, 7] within [0, count); empty text: all. Undefined when unreadable. */
export function parseSelection(text: string, count: number): number[] | undefined {
  if (text.trim() === '') return Array.from({ length: count }, (_, i) => i);
  const chosen = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^\s*(\d+)\s*(?:[-–]\s*(\d+)\s*)?$/.exec(part);
    if (!match) return undefined;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from || to >= count) return undefined;
    for (let i = from; i <= to; i++) chosen.add(i);
  }
  return [...chosen].sort((a, b) => a - b);
}

/** A token as a short, quoted label. */
export function quoted(token: string): string {
  const visible = shownToken(token);
  const shown = visible.length > 24 ? `${visible.slice(0, 23)}…` : visible;
  return `“${shown}”`;
}

export function weightText(value: number): string {
  return Number.isFinite(value) ? value.toFixed(value >= 0.001 || value === 0 ? 3 : 6) : String(value);
}

/** Tokens [from, to) of a list as one label: the token, or the first and last of a block. */
export function spanLabel(tokens: string[], from: number, to: number): string {
  return to - from <= 1 ? `${quoted(tokens[from])} (${from})` : `${from}–${to - 1} (${quoted(tokens[from])}…${quoted(tokens[to - 1])})`;
}

/** Milliseconds since the epoch, on the clock a benchmark outside the page also reads. */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}
