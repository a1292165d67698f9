// A multi-head problem's result as an AttentionStack: one layer, its heads' softmax weights.
import type { AttentionResult } from '../types';
import type { AttentionStack, StackSource } from './stack';

export interface ProblemLabels {
  source: Extract<StackSource, { kind: 'problem' }>;
  tokens?: string[];
  keyTokens?: string[];
}

/** Only the heads' weights are read (the worker receives just those of a result). */
export function stackOfResult(result: { heads: Pick<AttentionResult['heads'][number], 'weights'>[] }, { source, tokens, keyTokens }: ProblemLabels): AttentionStack {
  const first = result.heads[0]?.weights;
  if (!first) throw new Error('The problem has no heads.');
  const positions = (count: number) => Array.from({ length: count }, (_, i) => String(i));
  const queryTokens = tokens?.length === first.rows ? tokens : positions(first.rows);
  return {
    source,
    tokens: queryTokens,
    keyTokens: keyTokens?.length === first.cols ? keyTokens : first.cols === first.rows ? queryTokens : positions(first.cols),
    layerCount: 1,
    headCount: result.heads.length,
    queryCount: first.rows,
    keyCount: first.cols,
    weights: (_layer, head) => result.heads[head].weights.data,
  };
}
