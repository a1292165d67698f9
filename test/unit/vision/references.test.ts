// The vision fixture set itself: every reference agrees with a second route of the model part (the
// script's --check: patches by unfold + matmul, blocks through torch's own modules, DINOv2's
// position interpolation as explicit bicubic matrices, the heads written out).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { VISION_FIXTURES } from './fixtures';

const repoRoot = resolve(__dirname, '..', '..', '..');

describe('vision fixtures', () => {
  it('every float64 reference agrees with a second route (gen_vision_fixtures --check)', function () {
    this.timeout(300_000);
    const out = mkdtempSync(join(tmpdir(), 'vision-check-'));
    try {
      const report = execFileSync('/usr/bin/python3', [join(repoRoot, 'scripts', 'gen_vision_fixtures.py'), out, '--check'], { encoding: 'utf8' });
      const checked = [...report.matchAll(/^(\S+): reference vs torch modules, largest difference (\S+)$/gm)];
      // Every folder the script wrote a reference for, and every fixture the vision tests use.
      const referenced = readdirSync(out).filter((name) => readdirSync(join(out, name)).some((file) => /^reference-.*\.json$/.test(file)));
      assert.deepEqual(checked.map((m) => m[1]).sort(), referenced.sort(), report);
      assert.deepEqual(referenced.sort(), [...VISION_FIXTURES].sort(), report);
      for (const [, , difference] of checked) assert.ok(Number(difference) < 1e-9, report);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
