// Tensor references in text: a definition whose right-hand side loads a tensor from a file next to
// the text, in the forms people write in notebooks and scripts:
//   X = np.load("acts.npy")                     W = np.load("a.npz")["W_Q"]
//   W_Q = load_file("model.safetensors")["model.layers.0.self_attn.q_proj.weight"].T
//   W_K = torch.load("ckpt.pt", map_location="cpu")["model"]["k_proj.weight"]
// The reader only records what is named (file, key path, transpose); core/parse/tensors/resolve.ts
// reads the files through a function the front end supplies, so core stays free of IO.

/** `np.load(`, `numpy.load(`, `torch.load(`, `load_file(`, `safetensors.torch.load_file(`, then the quoted path. */
const LOADER = /(?:(?:np|numpy|torch)\.load|(?:safetensors\.(?:torch|numpy)\.)?load_file)\(\s*(?:'([^'\n]{1,300})'|"([^"\n]{1,300})")\s*(?:,[^()\n]{0,200})?\)/y;
/** One subscript: `["key"]`, `['key']` or `[0]`. */
const SUBSCRIPT = /\s*\[\s*(?:'([^'\n]{0,300})'|"([^"\n]{0,300})"|(\d{1,6}))\s*\]/y;
/** Conversions that leave the numbers alone, and the transpose. */
const SUFFIX = /\.(?:T\b|t\(\)|transpose\(\)|numpy\(\)|float\(\)|double\(\)|detach\(\)|cpu\(\))/y;

export interface ReferenceText {
  file: string;
  /** Keys joined with `.` (how nested checkpoints name their tensors), undefined for a whole .npy. */
  key?: string;
  transpose: boolean;
  end: number;
}

/** The reference starting at `at` (after an assignment and white space), if there is one. */
export function readReference(text: string, at: number): ReferenceText | undefined {
  LOADER.lastIndex = at;
  const call = LOADER.exec(text);
  if (!call) return undefined;
  let end = LOADER.lastIndex;
  const keys: string[] = [];
  for (;;) {
    SUBSCRIPT.lastIndex = end;
    const subscript = SUBSCRIPT.exec(text);
    if (!subscript) break;
    keys.push(subscript[1] ?? subscript[2] ?? subscript[3]);
    end = SUBSCRIPT.lastIndex;
  }
  let transpose = false;
  for (;;) {
    SUFFIX.lastIndex = end;
    const suffix = SUFFIX.exec(text);
    if (!suffix) break;
    if (suffix[0] !== '.numpy()' && suffix[0] !== '.float()' && suffix[0] !== '.double()' && suffix[0] !== '.detach()' && suffix[0] !== '.cpu()') transpose = !transpose;
    end = SUFFIX.lastIndex;
  }
  return { file: call[1] ?? call[2], ...(keys.length > 0 ? { key: keys.join('.') } : {}), transpose, end };
}
