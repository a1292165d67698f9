// Saved attentions read from disk with what lies beside them: tokens.json, tokenizer.json. Shared
// by the worker (the heads views) and the CLI (`attention-lens heads FILE`).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readTensorFile, type TensorLimits } from '../parse/tensors';
import { HeadsInputError, type SavedAttentions } from './saved';
import { readSavedAttentions } from './savedEncoderDecoder';
import { idLabeller } from './tokenLabels';

export function loadSavedAttentions(path: string, limits: TensorLimits, ids?: number[]): SavedAttentions {
  // The heads views only read the numbers and post copies of what they draw: views on the file's
  // bytes, not copies of them.
  const content = readTensorFile(path, readFileSync(path), { ...limits, viewsOnFile: true });
  const beside = (name: string) => {
    const file = join(dirname(path), name);
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  };
  const tokensJson = beside('tokens.json');
  let sidecarTokens: unknown;
  if (tokensJson !== undefined) {
    try {
      sidecarTokens = JSON.parse(tokensJson);
    } catch {
      throw new HeadsInputError('tokens.json beside the file is not JSON: write a list of token strings, ["The", " cat", …].');
    }
  }
  const tokenizerJson = beside('tokenizer.json');
  const labeller = tokenizerJson === undefined ? undefined : idLabeller(tokenizerJson);
  if (typeof labeller === 'string') throw new HeadsInputError(labeller);
  return readSavedAttentions({ file: basename(path), content, ids, sidecarTokens, labelIds: labeller });
}
