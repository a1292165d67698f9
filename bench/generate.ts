// `npm run bench:generate [-- --rounds N] [--case TEXT] [--new N]`: decoding with the key/value
// cache (issue 42) on random-weight folders in the published layouts (scripts/gen-bench-models.mjs,
// in test-output/models-big: GPT-2-small, f32; Qwen2.5-0.5B, bf16), a 32-token prompt and 128 new
// tokens, greedy, each run in a fresh process: ours (generateModel, its weights resident) against
// PyTorch decoding with past_key_values in the same run (bench/generate_peers.py, Debian's torch,
// float32). Per new token: wall ms and CPU ms (every thread; comparable when the machine is
// shared), after the first new token; the prompt's forward; and memory: the cache's bytes per
// position against 2 × layers × kv_heads × head_dim × 4, and the RSS grown while the tokens were
// generated. Runs take turns round by round; medians are printed. Not a test: nothing here asserts
// a time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseModelConfig } from '../src/core/model/config';
import { generateModel } from '../src/core/model/generate';
import { folderFiles } from '../src/node/modelFiles';
import { ensurePeers, fastestOpenBlas } from './peers';
// @ts-expect-error: a plain .mjs script without types
import { folderBytes, writeFolder } from '../scripts/gen-bench-models.mjs';

const root = join(__dirname, '..');
const argument = (flag: string): string | undefined => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const ROUNDS = Number(argument('--rounds') ?? 3);
const CASE_FILTER = argument('--case') ?? '';
const PROMPT = 32;
const NEW_TOKENS = Number(argument('--new') ?? 128);
const MODELS = ['gpt2-small', 'qwen2.5-0.5b'];
const bigFolders = join(root, 'test-output', 'models-big');
/** The peers run at the compute threads' niceness, as bench/model.ts runs them. */
const PEER_NICE = 10;

interface Timing {
  prompt_ms: number;
  per_token_ms: number;
  per_token_cpu_ms: number;
  rss_before_mb: number;
  rss_after_mb: number;
  max_rss_mb: number;
  tokens: number[];
  /** Ours: the cache's bytes per position, the final forward over the whole sequence, the backend and residency. */
  cache_bytes_per_position?: number;
  final_forward_ms?: number;
  backend?: string;
  resident?: string;
  stopped_by?: string;
}

/** Deterministic token ids inside both vocabularies (bench/model.ts's). */
const idsOf = (n: number): number[] => Array.from({ length: n }, (_, i) => 100 + ((i * 7919) % 50000));

const rssMb = () => process.memoryUsage().rss / 2 ** 20;
const cpuMs = () => ((used) => (used.user + used.system) / 1000)(process.cpuUsage());

async function child(folder: string): Promise<void> {
  // From the first new token on (the prompt's forward and the sessions' making are before it), as the peer counts.
  let first: { ms: number; cpu: number; rss: number } | undefined;
  let last = first;
  const run = await generateModel(folderFiles(folder), { ids: idsOf(PROMPT) }, {
    maxNewTokens: NEW_TOKENS,
    onStep: (step) => {
      const now = { ms: performance.now(), cpu: cpuMs(), rss: rssMb() };
      if (step.index === 0) first = now;
      last = now;
    },
  });
  const g = run.generation!;
  const steps = g.steps.length - 1;
  const timing: Timing = {
    prompt_ms: g.prefillMs + g.steps[0].ms,
    per_token_ms: (last!.ms - first!.ms) / steps,
    per_token_cpu_ms: (last!.cpu - first!.cpu) / steps,
    rss_before_mb: first!.rss,
    rss_after_mb: last!.rss,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    tokens: g.steps.map((step) => step.id),
    cache_bytes_per_position: g.cacheBytes / (g.promptLength + NEW_TOKENS),
    final_forward_ms: run.timings.forwardMs,
    backend: run.backend,
    resident: run.resident,
    stopped_by: g.stoppedBy,
  };
  process.stdout.write(`${JSON.stringify(timing)}\n`);
}

/** One fresh process's JSON line. */
function spawnJson(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Timing {
  const out = spawnSync('nice', ['-n', String(PEER_NICE), command, ...args], { encoding: 'utf8', env, maxBuffer: 2 ** 24 });
  if (out.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1) as string) as Timing;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function folderOf(model: string): string {
  const folder = join(bigFolders, model);
  if (!existsSync(join(folder, 'config.json'))) {
    mkdirSync(bigFolders, { recursive: true });
    console.log(`writing ${folder} (${(folderBytes(model) / 1e9).toFixed(1)} GB, scripts/gen-bench-models.mjs)…`);
    writeFolder(bigFolders, model);
  }
  return folder;
}

async function main(): Promise<void> {
  ensurePeers();
  const kernel = fastestOpenBlas();
  console.log(`${cpus()[0].model}, ${cpus().length} cores, ${(totalmem() / 1e9).toFixed(1)} GB, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; OpenBLAS ${kernel.name}`);
  console.log(`a ${PROMPT}-token prompt, ${NEW_TOKENS} new tokens, greedy; per new token after the first (medians of ${ROUNDS} rounds)`);
  console.log('model          | ours: backend resident  prompt  ms/token  CPU ms/token  final forward | torch: prompt  ms/token  CPU ms/token | ours/torch (wall, CPU) | cache B/position (2·L·kv·d·4)  RSS grown MB: ours, torch');
  for (const model of MODELS.filter((name) => name.includes(CASE_FILTER))) {
    const folder = folderOf(model);
    const c = parseModelConfig(readFileSync(join(folder, 'config.json'), 'utf8'));
    const runs: Record<'ours' | 'torch', Timing[]> = { ours: [], torch: [] };
    for (let round = 0; round < ROUNDS; round++) {
      runs.ours.push(spawnJson(process.execPath, ['--import', 'tsx', __filename, '--child', folder]));
      runs.torch.push(spawnJson('/usr/bin/python3', [join(__dirname, 'generate_peers.py'), folder, idsOf(PROMPT).join(','), String(NEW_TOKENS)], kernel.env));
    }
    const m = (list: Timing[], key: keyof Timing) => median(list.map((t) => Number(t[key] ?? NaN)));
    const grown = (list: Timing[]) => median(list.map((t) => t.rss_after_mb - t.rss_before_mb));
    const f = (v: number) => (Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1));
    const [ours, torch] = [runs.ours[0], runs.torch[0]];
    const same = ours.tokens.every((id, i) => id === torch.tokens[i]);
    console.log(
      `${model.padEnd(14)} | ${(ours.backend ?? '?').padEnd(11)} ${(ours.resident ?? '?').padEnd(9)} ${f(m(runs.ours, 'prompt_ms'))} ${f(m(runs.ours, 'per_token_ms'))} ${f(m(runs.ours, 'per_token_cpu_ms'))} ${f(m(runs.ours, 'final_forward_ms'))}` +
        ` | ${f(m(runs.torch, 'prompt_ms'))} ${f(m(runs.torch, 'per_token_ms'))} ${f(m(runs.torch, 'per_token_cpu_ms'))}` +
        ` | ${(m(runs.ours, 'per_token_ms') / m(runs.torch, 'per_token_ms')).toFixed(2)}×, ${(m(runs.ours, 'per_token_cpu_ms') / m(runs.torch, 'per_token_cpu_ms')).toFixed(2)}×` +
        ` | ${ours.cache_bytes_per_position} (${2 * c.layers * c.kvHeads * c.headDim * 4})  ${f(grown(runs.ours))}, ${f(grown(runs.torch))}` +
        `  (${ours.tokens.length} tokens, stopped by ${ours.stopped_by}; ${same ? 'the same tokens as torch' : `tokens differ from torch's from ${ours.tokens.findIndex((id, i) => id !== torch.tokens[i])}`})`,
    );
  }
}

if (process.argv.includes('--child')) void child(argument('--child') as string).then(() => process.exit(0));
else void main().then(() => process.exit(0));
