// Debian's Chromium driven by playwright-core: the browser that hosts the code-server workbench.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { ensureDebianPackages } from './system.mjs';

const chromiumPath = '/usr/bin/chromium';

// Flags from design §5: no sandbox (root in a container), no GPU, and nothing that phones home.
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches Chromium (installing Debian's package when missing). Close it with `browser.close()`. */
export async function launchChromium() {
  if (!existsSync(chromiumPath)) ensureDebianPackages(['chromium']);
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
}
