// The whole-model forward's linear layers on ONNX Runtime: C = A·B (+ bias) as one MatMul [+ Add]
// graph per kind of product (B transposed or not, bias or not), and a block's whole MLP as one
// graph per kind of MLP; the sizes are symbolic, so one cached session serves every layer of that
// kind.
import type * as Ort from 'onnxruntime-node';
import type { ConstantWeight, LinearBackend, LinearWeights, MlpPart, MlpWeights } from '../../model/backend';
import type { Activation } from '../../model/config';
import { type ElementType, Graph } from './graph';
import { backendChoice, nativeRuntime, releaseSessions, sessionFor } from './runtime';

const KEY = 'linear:';

function linearGraph(bTransposed: boolean, bias: boolean, activation: Activation | undefined): Graph {
  const g = new Graph();
  const product = linearOf(g, g.input('a', 'float32', ['m', 'k']), 'b', bTransposed, bias, 'k', 'n');
  g.output('c', activation ? activated(g, product, activation) : product, 'float32', ['m', 'n']);
  return g;
}

/** input · B (+ bias), B fed as `name` ([inDim × outDim], or [outDim × inDim] when transposed) and its bias as `name`_bias. */
function linearOf(g: Graph, input: string, name: string, transposed: boolean, bias: boolean, inDim: string, outDim: string): string {
  const b = g.input(name, 'float32', transposed ? [outDim, inDim] : [inDim, outDim]);
  // ONNX Runtime folds the transpose into its GEMM's packing (no copy of B is made here).
  const product = g.op('MatMul', [input, transposed ? g.op('Transpose', [b], { perm: [1, 0] }) : b]);
  return bias ? g.op('Add', [product, g.input(`${name}_bias`, 'float32', [outDim])]) : product;
}

/**
 * input · W (+ bias) with W a constant of the graph, given as stored (bf16, f16 or f32 bytes;
 * [out × in] when transposed): ONNX Runtime casts and transposes it once when the session is made
 * and pre-packs it for its GEMM, so a run feeds only the activations.
 */
function constantLinearOf(g: Graph, input: string, name: string, w: LinearWeights): string {
  const c = w.constant as ConstantWeight;
  let b = g.initializer(name, c.dtype as ElementType, c.shape, c.arrange ? c.arrange(c.stored as Uint8Array) : (c.stored as Uint8Array));
  if (c.dtype !== 'float32') b = g.op('Cast', [b], { to: 1 });
  // Gemm with transB reads nn.Linear's [out × in] as it is: a MatMul on its Transpose made ONNX
  // Runtime fold a transposed copy first (a 2048 × 8192 weight's session: ~440 against ~270 ms of CPU).
  const bias = w.bias ? [g.initializer(`${name}_bias`, 'float32', [w.out], new Uint8Array(w.bias.buffer, w.bias.byteOffset, w.bias.byteLength))] : [];
  return g.op('Gemm', [input, b, ...bias], { transB: w.transposed ? 1 : 0 });
}

/** x · W (+ bias), W constant, cut by columns into `widths` outputs c0… (one part: the product). */
function constantPartsGraph(w: LinearWeights, widths: number[]): Graph {
  const g = new Graph();
  const product = constantLinearOf(g, g.input('x', 'float32', ['m', w.in]), 'b', w);
  if (widths.length === 1) g.output('c0', product, 'float32', ['m', w.out]);
  else g.opOutputs('Split', [product, g.constant('int64', widths)], { axis: 1 }, widths.length).forEach((part, i) => g.output(`c${i}`, part, 'float32', ['m', widths[i]]));
  return g;
}

/** A block's MLP with its weights constants of the graph. */
function constantMlpGraph({ up, gate, down, activation }: MlpWeights): Graph {
  const g = new Graph();
  const x = g.input('x', 'float32', ['m', up.in]);
  const upped = constantLinearOf(g, x, 'up', up);
  const hidden = gate ? g.op('Mul', [activated(g, constantLinearOf(g, x, 'gate', gate), activation), upped]) : activated(g, upped, activation);
  g.output('y', constantLinearOf(g, hidden, 'down', down), 'float32', ['m', down.out]);
  return g;
}

/**
 * Sessions that hold a resident model's weights get no memory arena of their own: a model keeps
 * five per layer, and each arena would keep its largest run's activations (at 512 tokens, tens of
 * MB a session) for as long as the model stays.
 */
const CONSTANT_SESSION: Ort.InferenceSession.SessionOptions = { enableCpuMemArena: false };
const CONSTANT_KEY = 'const:';

/** A product on constant weights: its session's key (per model, weight and kind of product), the weights (the first one's model holds it), and its graph of them. */
interface ConstantProduct {
  key: string;
  weights: (LinearWeights | undefined)[];
  build: (weights: (LinearWeights | undefined)[]) => Graph;
}

/** Whether every weight is a constant the backend can keep: its stored bytes here, or its session already made. */
function constants(weights: (LinearWeights | undefined)[]): boolean {
  return weights.every((w) => !w || (w.constant && (w.constant.stored || w.constant.model.holds(w.constant.key)) && w.constant.dtype !== 'float64'));
}

/** x · B (+ bias) cut by columns into `parts` outputs, c0…, of the widths fed at each run. */
function partsGraph(transposed: boolean, bias: boolean, parts: number): Graph {
  const g = new Graph();
  const product = linearOf(g, g.input('x', 'float32', ['m', 'k']), 'b', transposed, bias, 'k', 'n');
  g.opOutputs('Split', [product, g.input('widths', 'int64', [parts])], { axis: 1 }, parts).forEach((part, i) => g.output(`c${i}`, part, 'float32', ['m', `n${i}`]));
  return g;
}

/** The kind of an MLP: what its graph depends on (gated or not, each weight's layout and bias, the activation). */
function mlpKind({ up, gate, down, activation }: MlpWeights): string {
  const layer = (w: LinearWeights | undefined) => (w ? `${w.transposed}/${Boolean(w.bias)}` : '-');
  return [layer(up), layer(gate), layer(down), activation].join(':');
}

function mlpGraph(weights: MlpWeights): Graph {
  const g = new Graph();
  g.output('y', mlpOf(g, g.input('x', 'float32', ['m', 'hidden']), weights, ''), 'float32', ['m', 'out']);
  return g;
}

/** An MLP of x with its weights fed as up`suffix`, gate`suffix`, down`suffix` (and their biases). */
function mlpOf(g: Graph, x: string, { up, gate, down, activation }: MlpWeights, suffix: string): string {
  const ffn = `ffn${suffix}`;
  const upped = linearOf(g, x, `up${suffix}`, up.transposed, Boolean(up.bias), 'hidden', ffn);
  const hidden = gate ? g.op('Mul', [activated(g, linearOf(g, x, `gate${suffix}`, gate.transposed, Boolean(gate.bias), 'hidden', ffn), activation), upped]) : activated(g, upped, activation);
  return linearOf(g, hidden, `down${suffix}`, down.transposed, Boolean(down.bias), ffn, 'out');
}

/**
 * `count` MLPs of one kind: x's rows split by the fed `rows` (int64 [count]), MLP i on part i with
 * its weights fed as up`i`, gate`i`, down`i`, the outputs concatenated in order.
 */
function mlpsGraph(weights: MlpWeights, count: number): Graph {
  const g = new Graph();
  const x = g.input('x', 'float32', ['m', 'hidden']);
  const parts = count === 1 ? [x] : g.opOutputs('Split', [x, g.input('rows', 'int64', [count])], { axis: 0 }, count);
  const outputs = parts.map((part, i) => mlpOf(g, part, weights, String(i)));
  g.output('y', count === 1 ? outputs[0] : g.op('Concat', outputs, { axis: 0 }), 'float32', ['m', 'out']);
  return g;
}

/**
 * The activation as ONNX's elementwise ops, which ONNX Runtime runs vectorised: in JavaScript, by
 * Math.exp, GPT-2-small's MLP activations cost 23 ns per number, ~440 ms of a 512-token forward.
 * The formulas are ops.ts's.
 */
function activated(g: Graph, x: string, activation: Activation): string {
  const scalar = (value: number): string => g.constant('float32', [value], []);
  switch (activation) {
    case 'gelu-tanh':
      // ONNX Runtime's FastGelu, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): one pass over the
      // [m × ffn] intermediate, where five elementwise ops each wrote one more into the arena.
      return g.runtimeOp('FastGelu', [x]);
    case 'gelu-erf':
      // 0.5·x·(1 + erf(x/√2))
      return g.op('Mul', [g.op('Mul', [x, scalar(0.5)]), g.op('Add', [g.op('Erf', [g.op('Mul', [x, scalar(Math.SQRT1_2)])]), scalar(1)])]);
    case 'silu':
      return g.op('Mul', [x, g.op('Sigmoid', [x])]);
    case 'relu':
      return g.op('Relu', [x]);
    case 'gelu-quick':
      // CLIP's quick_gelu, x·σ(1.702·x)
      return g.op('Mul', [x, g.op('Sigmoid', [g.op('Mul', [x, scalar(1.702)])])]);
  }
}

/**
 * Products under way, from asking for their session to their answer. The sessions are shared by
 * every backend (one per kind of product), so a dispose releases them only once none is under way:
 * a run that released them while another run was in a product made that product fail, and the
 * rest of that forward fall back to WebAssembly (a different rounding, and slower). A run between
 * two products just makes its next session again (2–12 ms).
 */
let productsUnderWay = 0;
let releaseWhenIdle = false;

/**
 * Constant sessions left to make, by key, oldest first: made one at a time once no product has run
 * for IDLE_MS (each blocks this thread while ONNX Runtime makes it, 10–600 ms), or all at once by
 * `makeDeferredSessions`.
 */
const deferred = new Map<string, () => Promise<void>>();
/** Constant sessions being made, by key. */
const making = new Map<string, Promise<void>>();
const IDLE_MS = 300;
/** Rows up to which a product used before makes its session at once (a generated token's one row, a short prompt's). */
const EAGER_ROWS = 8;
let lastProductEnded = 0;
let packTimer: ReturnType<typeof setTimeout> | undefined;

function packWhenIdle(): void {
  if (packTimer || deferred.size === 0) return;
  packTimer = setTimeout(() => void packOneIfIdle(), IDLE_MS);
  // A process with nothing else to do (the command line after its run) exits rather than pack.
  packTimer.unref();
}

async function packOneIfIdle(): Promise<void> {
  packTimer = undefined;
  const next = first(deferred);
  if (next && productsUnderWay === 0 && performance.now() - lastProductEnded >= IDLE_MS) {
    deferred.delete(next[0]);
    // A session ONNX Runtime refuses is made again (and reported) by the product's next use.
    await next[1]().catch(() => undefined);
  }
  packWhenIdle();
}

const first = <K, V>(map: Map<K, V>): [K, V] | undefined => map.entries().next().value;

/** Makes every deferred constant session now (the bench, after a first run; tests). */
export async function makeDeferredSessions(): Promise<void> {
  for (let next = first(deferred); next; next = first(deferred)) {
    deferred.delete(next[0]);
    await next[1]();
  }
  // Those the idle packing has under way.
  await Promise.all(making.values());
}

function releaseLinearSessions(): void {
  releaseWhenIdle = false;
  void releaseSessions(KEY);
}

export class NativeLinearBackend implements LinearBackend {
  readonly name = 'onnxruntime';

  constructor(private readonly ort: typeof Ort) {}

  matmul(a: Float32Array, b: Float32Array, m: number, k: number, n: number, bTransposed: boolean, bias?: Float32Array, activation?: Activation): Promise<Float32Array> {
    if (a.length !== m * k || b.length !== k * n || (bias && bias.length !== n)) {
      return Promise.reject(new RangeError(`matmul: A is ${a.length} numbers for ${m}×${k}, B ${b.length} for ${bTransposed ? `${n}×${k}` : `${k}×${n}`}${bias ? `, bias ${bias.length} for ${n}` : ''}`));
    }
    const feeds: Record<string, Ort.Tensor> = { a: this.tensor(a, [m, k]), b: this.tensor(b, bTransposed ? [n, k] : [k, n]) };
    if (bias) feeds.b_bias = this.tensor(bias, [n]);
    return this.run(`${KEY}${bTransposed}:${Boolean(bias)}:${activation ?? ''}`, () => linearGraph(bTransposed, Boolean(bias), activation), feeds, ['c']).then(([c]) => c);
  }

  matmulParts(x: Float32Array, m: number, w: LinearWeights, widths: number[]): Promise<Float32Array[]> {
    const product: ConstantProduct | undefined = w.constant && { key: `${w.constant.key}:parts:${widths.join(',')}`, weights: [w], build: ([part]) => constantPartsGraph(part as LinearWeights, widths) };
    if (product && this.onSession(product, m)) {
      if (x.length !== m * w.in || widths.reduce((sum, width) => sum + width, 0) !== w.out) return Promise.reject(new RangeError(`matmulParts: x is ${x.length} numbers for ${m}×${w.in}, parts ${widths.join(' + ')} of ${w.out}`));
      return this.runConstant(product, x, m, w.in, widths.map((_, i) => `c${i}`));
    }
    if (x.length !== m * w.in || w.weight.length !== w.in * w.out || (w.bias && w.bias.length !== w.out) || widths.reduce((sum, width) => sum + width, 0) !== w.out) {
      return Promise.reject(new RangeError(`matmulParts: x is ${x.length} numbers for ${m}×${w.in}, B ${w.weight.length} for ${w.in}×${w.out}${w.bias ? `, bias ${w.bias.length}` : ''}, parts ${widths.join(' + ')}`));
    }
    const feeds: Record<string, Ort.Tensor> = {
      x: this.tensor(x, [m, w.in]),
      b: this.tensor(w.weight, w.transposed ? [w.out, w.in] : [w.in, w.out]),
      widths: new this.ort.Tensor('int64', BigInt64Array.from(widths, BigInt), [widths.length]),
    };
    if (w.bias) feeds.b_bias = this.tensor(w.bias, [w.out]);
    return this.run(`${KEY}parts:${w.transposed}:${Boolean(w.bias)}:${widths.length}`, () => partsGraph(w.transposed, Boolean(w.bias), widths.length), feeds, widths.map((_, i) => `c${i}`));
  }

  mlp(x: Float32Array, m: number, weights: MlpWeights): Promise<Float32Array> {
    const { up, gate, down } = weights;
    const product: ConstantProduct | undefined = up.constant && {
      key: `${up.constant.key}:mlp:${weights.activation}`,
      weights: [up, gate, down],
      build: ([u, g, d]) => constantMlpGraph({ up: u as LinearWeights, ...(g ? { gate: g } : {}), down: d as LinearWeights, activation: weights.activation }),
    };
    if (product && this.onSession(product, m)) {
      if (x.length !== m * up.in || down.in !== up.out) return Promise.reject(new RangeError(`mlp: x is ${x.length} numbers for ${m}×${up.in}, up ${up.in}×${up.out}, down ${down.in}×${down.out}`));
      return this.runConstant(product, x, m, up.in, ['y']).then(([y]) => y);
    }
    const feeds: Record<string, Ort.Tensor> = { x: this.tensor(x, [m, up.in]) };
    for (const [name, w] of [['up', up], ['gate', gate], ['down', down]] as const) {
      if (!w) continue;
      if (w.weight.length !== w.in * w.out || (w.bias && w.bias.length !== w.out)) {
        return Promise.reject(new RangeError(`mlp: ${name} is ${w.weight.length} numbers for ${w.in}×${w.out}${w.bias ? `, its bias ${w.bias.length}` : ''}`));
      }
      feeds[name] = this.tensor(w.weight, w.transposed ? [w.out, w.in] : [w.in, w.out]);
      if (w.bias) feeds[`${name}_bias`] = this.tensor(w.bias, [w.out]);
    }
    if (x.length !== m * up.in || down.in !== up.out || (gate && (gate.in !== up.in || gate.out !== up.out))) {
      return Promise.reject(new RangeError(`mlp: x is ${x.length} numbers for ${m}×${up.in}, up ${up.in}×${up.out}, ${gate ? `gate ${gate.in}×${gate.out}, ` : ''}down ${down.in}×${down.out}`));
    }
    return this.run(`${KEY}mlp:${mlpKind(weights)}`, () => mlpGraph(weights), feeds, ['y']).then(([y]) => y);
  }

  mlps(x: Float32Array, parts: MlpPart[]): Promise<Float32Array> {
    const kind = mlpKind(parts[0].weights);
    const width = parts[0].weights.up.in;
    const feeds: Record<string, Ort.Tensor> = { x: this.tensor(x, [x.length / width, width]) };
    if (parts.length > 1) feeds.rows = new this.ort.Tensor('int64', BigInt64Array.from(parts, (part) => BigInt(part.rows)), [parts.length]);
    for (const [i, { rows, weights }] of parts.entries()) {
      if (mlpKind(weights) !== kind || weights.up.in !== width || weights.down.in !== weights.up.out) return Promise.reject(new RangeError(`mlps: part ${i} is not an MLP of the first's kind and width`));
      if (rows === 0) return Promise.reject(new RangeError(`mlps: part ${i} has no rows`));
      for (const [name, w] of [['up', weights.up], ['gate', weights.gate], ['down', weights.down]] as const) {
        if (!w) continue;
        if (w.weight.length !== w.in * w.out || (w.bias && w.bias.length !== w.out)) return Promise.reject(new RangeError(`mlps: part ${i}'s ${name} is ${w.weight.length} numbers for ${w.in}×${w.out}`));
        feeds[`${name}${i}`] = this.tensor(w.weight, w.transposed ? [w.out, w.in] : [w.in, w.out]);
        if (w.bias) feeds[`${name}${i}_bias`] = this.tensor(w.bias, [w.out]);
      }
    }
    if (x.length !== parts.reduce((sum, part) => sum + part.rows, 0) * width) return Promise.reject(new RangeError(`mlps: x is ${x.length} numbers for ${parts.map((part) => part.rows).join(' + ')} rows of ${width}`));
    return this.run(`${KEY}mlps:${parts.length}:${kind}`, () => mlpsGraph(parts[0].weights, parts.length), feeds, ['y']).then(([y]) => y);
  }

  private tensor(data: Float32Array, dims: number[]): Ort.Tensor {
    return new this.ort.Tensor('float32', data, dims);
  }

  /**
   * Whether `product` runs on its session now, on `m` rows: when its model holds it, or when this
   * is a later use on a few rows, or any use on a few rows while its model generates (made now: a
   * generation's tokens, each of which would read and widen the weight again). Otherwise the
   * weights are fed as inputs and the session is made once the products are idle: making it costs
   * ~10× a 128-row product (a 2048 × 8192 weight: ~300 ms of CPU to encode, load and pre-pack,
   * against ~30 ms to run), which a model's first run paid for every weight on the click's path.
   */
  private onSession({ key, weights, build }: ConstantProduct, m: number): boolean {
    const model = (weights[0] as LinearWeights).constant?.model;
    if (!model || model.holds(key)) return Boolean(model);
    if (!constants(weights)) return false;
    if ((model.usedOnce.has(key) || model.generating > 0) && m <= EAGER_ROWS) return true;
    model.usedOnce.add(key);
    // The layers' sizes and constants, not this call's weights: their bytes lie on memory the run reuses.
    const layers = weights.map((w): (LinearWeights & { constant: ConstantWeight }) | undefined => w && { in: w.in, out: w.out, transposed: w.transposed, ...(w.bias ? { bias: w.bias } : {}), weight: new Float32Array(0), constant: { ...(w.constant as ConstantWeight), stored: undefined } });
    deferred.set(key, async () => {
      if (model.released || model.holds(key)) return;
      for (const w of layers) if (w) w.constant.stored = await w.constant.read();
      if (!model.released) await this.makeConstantSession({ key, weights: layers, build });
    });
    packWhenIdle();
    return false;
  }

  /**
   * Makes the session holding `product`'s weights from their stored bytes, which are not kept here:
   * the session holds them. Once: a use and the idle packing may ask at the same time.
   */
  private makeConstantSession({ key, weights, build }: ConstantProduct): Promise<void> {
    deferred.delete(key);
    const { model } = (weights[0] as LinearWeights).constant as ConstantWeight;
    let made = making.get(key);
    if (!made && !model.holds(key)) {
      const sessionKey = CONSTANT_KEY + key;
      made = sessionFor(this.ort, sessionKey, () => build(weights), CONSTANT_SESSION).then(() => {
        const bytes = weights.reduce((sum, w) => sum + (w ? w.in * w.out * 4 : 0), 0);
        model.hold(key, bytes, () => void releaseSessions(sessionKey));
        // Each weight is held through this session: its model need not read it again.
        for (const w of weights) if (w?.constant) model.hold(w.constant.key, 0, () => undefined);
      });
      making.set(key, made);
      void made.finally(() => making.delete(key)).catch(() => undefined);
    }
    return made ?? Promise.resolve();
  }

  /** `outputs` of `product`'s session (made now when not held yet) run on x [m × k]. */
  private async runConstant(product: ConstantProduct, x: Float32Array, m: number, k: number, outputs: string[]): Promise<Float32Array[]> {
    const { key, weights } = product;
    if (!((weights[0] as LinearWeights).constant as ConstantWeight).model.holds(key)) await this.makeConstantSession(product);
    return this.run(CONSTANT_KEY + key, () => {
      throw new Error(`the session of ${key} was let go`);
    }, { x: this.tensor(x, [m, k]) }, outputs);
  }

  /** `outputs` of the cached session `key` (built by `build` on a miss) run on `feeds`. */
  private async run(key: string, build: () => Graph, feeds: Record<string, Ort.Tensor>, outputs: string[]): Promise<Float32Array[]> {
    productsUnderWay++;
    try {
      const session = await sessionFor(this.ort, key, build);
      const results = await session.run(feeds);
      return outputs.map((name) => results[name].data as Float32Array);
    } finally {
      lastProductEnded = performance.now();
      if (--productsUnderWay === 0 && releaseWhenIdle) releaseLinearSessions();
    }
  }

  /** Releases the sessions (they keep ONNX Runtime's memory arena), once no product is under way. */
  dispose(): void {
    if (productsUnderWay === 0) releaseLinearSessions();
    else releaseWhenIdle = true;
  }
}

/** The environment's start, once per thread: it outlives every session. */
let environmentStarted: Promise<void> | undefined;

/**
 * Loads ONNX Runtime and starts its environment with a 1 × 1 product, once: a thread's first
 * session costs ~120 ms, later ones 2–12 ms, even after every session was released. Every model run
 * asks for it, and only the first does the work; a later one neither makes a session nor releases
 * another run's. Nothing where the WebAssembly backend is forced, or ONNX Runtime cannot load or
 * fails (the run that needs it falls back, and says why).
 */
export function warmNativeLinear(): Promise<void> {
  if (backendChoice() === 'wasm') return Promise.resolve();
  environmentStarted ??= startEnvironment();
  return environmentStarted;
}

async function startEnvironment(): Promise<void> {
  const backend = nativeLinearBackend();
  try {
    await backend?.matmul(new Float32Array(1), new Float32Array(1), 1, 1, 1, false);
  } catch {
    // the run's to report
  } finally {
    backend?.dispose();
  }
}

/** The backend on ONNX Runtime, or undefined where it cannot load (the caller keeps the WebAssembly one). */
export function nativeLinearBackend(): NativeLinearBackend | undefined {
  const runtime = nativeRuntime();
  return runtime.ok ? new NativeLinearBackend(runtime.ort) : undefined;
}
