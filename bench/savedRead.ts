// Saved attentions read as the worker reads them (loadSavedAttentions: the file's bytes, views on
// them, every row checked), each file in a fresh node process so that its peak RSS is its own:
//
//   npx tsx bench/savedRead.ts [--tokens 1024] [--rounds 3] [--formats pt,npy,safetensors]
//
// writes the 12 × 12 × N² float32 stack as torch.save's .pt, numpy.save's .npy and a .safetensors
// of one tensor per layer into test-output/heads-bench/N/ (not committed) with Debian's
// torch/numpy when missing, and prints one line per file: its bytes, then wall, CPU (user + system)
// and peak RSS, medians of the rounds, and peak RSS ÷ bytes. The goal of issue 45: ≤ 2 s of wall
// time and ≤ 2× the file's bytes in memory for the 604 MB files of 1024 tokens.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { loadSavedAttentions } from '../src/core/heads/load';

const ROOT = path.resolve(__dirname, '..');
const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};

if (process.argv[2] === '--child') {
  // One read, in this process: wall, CPU and this process's peak RSS.
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { stack } = loadSavedAttentions(process.argv[3], { maxElements: 2 ** 28 });
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  process.stdout.write(JSON.stringify({ wallMs, cpuMs: (used.user + used.system) / 1000, sysMs: used.system / 1000, peakRssBytes: process.resourceUsage().maxRSS * 1024, layers: stack.layerCount }));
} else {
  const tokens = Number(option('--tokens', '1024'));
  const rounds = Number(option('--rounds', '3'));
  const formats = option('--formats', 'pt,npy,safetensors').split(',');
  const folder = path.join(ROOT, 'test-output', 'heads-bench', String(tokens));
  const stem = path.join(folder, `attn-12x12x${tokens}`);
  const missing = formats.filter((format) => !existsSync(`${stem}.${format}`));
  if (missing.length > 0) {
    console.log(`writing ${missing.join(', ')} of 12 × 12 × ${tokens}² with Debian's torch/numpy…`);
    execFileSync('/usr/bin/python3', [path.join(ROOT, 'scripts', 'gen_saved_attentions.py'), '--bench', path.dirname(folder), '--tokens', String(tokens), '--formats', missing.join(',')], { stdio: 'inherit' });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(`saved attentions read as the worker reads them, median of ${rounds} fresh processes (load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  for (const format of formats) {
    const file = `${stem}.${format}`;
    const bytes = statSync(file).size;
    const runs = Array.from({ length: rounds }, () => JSON.parse(execFileSync(process.execPath, [...process.execArgv, __filename, '--child', file], { encoding: 'utf8', maxBuffer: 1 << 20 })) as { wallMs: number; cpuMs: number; sysMs: number; peakRssBytes: number });
    const wall = median(runs.map((run) => run.wallMs));
    const cpu = median(runs.map((run) => run.cpuMs));
    const sys = median(runs.map((run) => run.sysMs));
    const rss = median(runs.map((run) => run.peakRssBytes));
    console.log(
      `${path.basename(file).padEnd(32)} ${(bytes / 1e6).toFixed(0).padStart(5)} MB  wall ${(wall / 1000).toFixed(2)} s  CPU ${(cpu / 1000).toFixed(2)} s (system ${(sys / 1000).toFixed(2)})  peak RSS ${(rss / 1e6).toFixed(0)} MB = ${(rss / bytes).toFixed(2)}× the file  [walls ${runs.map((run) => (run.wallMs / 1000).toFixed(2)).join(', ')} s; load average ${loadavg()[0].toFixed(1)} after]`,
    );
  }
}
