// What a page knows of one kind of an encoder–decoder run: the run's StackInfo with that kind's
// tokens per axis and counts, titled with the kind. Shared by the heads page (its selector, the
// alignment view) and the host (the HTML report of the kind shown); imports nothing but types.
import type { AttentionKind, StackInfo } from '../protocol';

/** `run` as its `kind` shows it (the run itself when it has no such kind or none is named). */
export function infoOfKind(run: StackInfo, kind: AttentionKind | undefined): StackInfo {
  const chosen = run.kinds?.find((entry) => entry.kind === kind);
  if (!chosen || !kind) return run;
  const { tokens, keyTokens, layerCount, headCount, queryCount, keyCount } = chosen;
  return { ...run, title: `${run.title} · ${kind}`, kind, tokens, keyTokens, layerCount, headCount, queryCount, keyCount };
}
