// `npm test`: every check in order, stopping at the first failure. Grows as suites land.
import { spawnSync } from 'node:child_process';

const steps = [
  ['type check', 'npx', ['tsc', '--noEmit', '-p', '.']],
  ['build', 'node', ['esbuild.mjs']],
  ['unit tests', 'npx', ['mocha']],
];

for (const [label, command, args] of steps) {
  console.log(`\n=== ${label}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`\n${label} failed (exit ${result.status})`);
    process.exit(1);
  }
}
