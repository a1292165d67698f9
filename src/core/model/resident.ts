// Models whose weights stay in memory between runs, under one budget for the thread (the engine
// worker, the CLI, a test), the least recently used model let go first. A resident model keeps
// either its tensors' stored bytes (bf16 as bf16), or, where the native backend runs its products,
// ONNX Runtime's sessions holding each linear layer's weight as a constant it pre-packed once: the
// products' weights are then neither read nor widened again, and ONNX Runtime's packed GEMM runs
// 1.76× faster than on weights fed as inputs (issue 41's probe, an 8B MLP product).
//
// Profiled before (Qwen2.5-0.5B-shaped, bf16, 128 tokens, ONNX Runtime's products): of the main
// thread's CPU, widening bf16 to float32 in JavaScript at every run took 6.2 s over two runs, the
// products 3.3 s, the file reads a few hundred ms; the second run of the same model was no faster
// than the first.
import { totalmem } from 'node:os';

/** Why a model is or is not resident, for the status bar, the CLI and the bench. */
export type ResidentMode = 'constants' | 'stored' | 'streamed';

export interface ResidentSummary {
  folder: string;
  mode: ResidentMode;
  /**
   * Bytes held (stored bytes kept plus what the backend holds as constants), or to be held once the
   * weights its first run fed are packed in the idle time after it: the figure the budget counts.
   */
  bytes: number;
  lastUsed: number;
}

/** What the backend keeps of one constant weight, and how to let it go. */
interface Held {
  bytes: number;
  release: () => void;
}

/** One model's weights kept between runs. */
export class ResidentModel {
  /** Stored bytes of tensors, by their stored name. */
  readonly tensors = new Map<string, Uint8Array>();
  /** Tensors kept widened to float32, by stored name: a mixture's expert weights, fed to the backend at each run (weights.ts's `widened`). */
  readonly widened = new Map<string, Float32Array>();
  /** Constant keys the backend has run once on fed weights, its session to be made when idle or at the next use (native/linear.ts). */
  readonly usedOnce = new Set<string>();
  /** Runs generating tokens now: their products of a few rows make their sessions at their first use (each is used again at every token). */
  generating = 0;
  /** What the backend holds by constant key (ONNX Runtime sessions with their weights pre-packed). */
  private readonly held = new Map<string, Held>();
  lastUsed = Date.now();
  released = false;

  constructor(
    /** The folder and its weight files' sizes: a rewritten checkpoint is another model. */
    readonly key: string,
    readonly folder: string,
    readonly mode: Exclude<ResidentMode, 'streamed'>,
    /** The bytes it will hold once every tensor has been used (its admission's figure). */
    readonly plannedBytes: number,
    /** A short id for the backend's keys. */
    readonly id: string,
  ) {}

  get bytes(): number {
    let total = 0;
    for (const bytes of this.tensors.values()) total += bytes.byteLength;
    for (const values of this.widened.values()) total += values.byteLength;
    for (const { bytes } of this.held.values()) total += bytes;
    return total;
  }

  /** Whether the backend holds constant `key` (its weight need not be read). */
  holds(key: string): boolean {
    return this.held.has(key);
  }

  /** The backend keeps constant `key` (about `bytes`) until `release`: at the model's release, or now when it was released meanwhile. */
  hold(key: string, bytes: number, release: () => void): void {
    if (this.released) return release();
    this.held.get(key)?.release();
    this.held.set(key, { bytes, release });
  }

  /** Lets everything go: stored bytes to the garbage collector, the backend's constants released. */
  release(): void {
    this.released = true;
    this.tensors.clear();
    this.widened.clear();
    for (const { release } of this.held.values()) release();
    this.held.clear();
  }
}

/** `generate` with `model` marked as generating meanwhile (its products made packed at their first use on a few rows). */
export async function whileGenerating<T>(model: ResidentModel | undefined, generate: () => Promise<T>): Promise<T> {
  if (model) model.generating++;
  try {
    return await generate();
  } finally {
    if (model) model.generating--;
  }
}

const models = new Map<string, ResidentModel>();
let nextId = 1;

/** Bytes the resident models may hold together: `ATTENTION_LENS_RESIDENT_GB`, else 60% of the machine's memory, at most all but 6 GB. */
export function residentBudget(total = totalmem()): number {
  const setting = Number(process.env.ATTENTION_LENS_RESIDENT_GB);
  if (process.env.ATTENTION_LENS_RESIDENT_GB !== undefined && Number.isFinite(setting) && setting >= 0) return setting * 1e9;
  return Math.max(0, Math.min(total * 0.6, total - 6e9));
}

/** What a model would hold resident in each mode: every tensor's stored bytes; or, with constants, the products' weights in float32 and the rest stored. */
export interface ResidentPlan {
  storedBytes: number;
  constantBytes: number;
}

/**
 * The resident model for `key`, made now when `plan` fits the budget (least recently used models
 * let go to make room): as constants when `constants` is allowed and they fit, else stored; or
 * undefined (the run reads its weights as it goes, as before). The model is marked used.
 */
export function admit(key: string, folder: string, plan: ResidentPlan, constants: boolean, budget = residentBudget()): ResidentModel | undefined {
  const existing = models.get(key);
  const wanted: ResidentModel['mode'] | undefined = constants && plan.constantBytes <= budget ? 'constants' : plan.storedBytes <= budget ? 'stored' : undefined;
  if (existing && !existing.released && existing.mode === wanted) {
    existing.lastUsed = Date.now();
    return existing;
  }
  if (existing) release(key);
  if (!wanted) return undefined;
  const planned = wanted === 'constants' ? plan.constantBytes : plan.storedBytes;
  // Least recently used first, until the new model fits beside the rest.
  const others = [...models.values()].sort((a, b) => a.lastUsed - b.lastUsed);
  let held = others.reduce((sum, m) => sum + Math.max(m.bytes, m.plannedBytes), 0);
  for (const other of others) {
    if (held + planned <= budget) break;
    held -= Math.max(other.bytes, other.plannedBytes);
    release(other.key);
  }
  const model = new ResidentModel(key, folder, wanted, planned, `m${nextId++}`);
  models.set(key, model);
  return model;
}

/** Lets the model of `key` go (every model without a key). */
export function release(key?: string): void {
  for (const [k, model] of [...models]) {
    if (key !== undefined && k !== key) continue;
    model.release();
    models.delete(k);
  }
}

/** The resident models, most recently used first. */
export function residentModels(): ResidentSummary[] {
  return [...models.values()].sort((a, b) => b.lastUsed - a.lastUsed).map((m) => ({ folder: m.folder, mode: m.mode, bytes: Math.max(m.bytes, m.plannedBytes), lastUsed: m.lastUsed }));
}
