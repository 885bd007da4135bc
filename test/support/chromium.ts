import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

// Debian's headless Chromium, driven with playwright-core, for the tests that use a real
// browser (the Temporal web UI, the support console). scripts/install-chromium.sh installs it;
// screenshots go to test-artifacts/ (git-ignored).

/** Where browser tests save their screenshots. */
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts');

/** The Chromium to drive: CASEWORK_CHROMIUM, else Debian's package, else whatever is on PATH. */
export function findChromium(): string | undefined {
  const candidates = [process.env.CASEWORK_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  for (const path of candidates) if (path && existsSync(path)) return path;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
    if (found) return found;
  }
  return undefined;
}

/** The browser found on this machine, if any. */
export const executablePath = findChromium();

/** Why a browser test cannot run here. */
export const missing = 'headless Chromium is not installed: run `sudo bash scripts/install-chromium.sh` (Debian package chromium) or set CASEWORK_CHROMIUM';

/** The `skip` option of a browser test's describe: under CI a missing browser is a failure, not a quiet skip. */
export const skipWithoutChromium: string | false = !executablePath && process.env.CI !== 'true' ? missing : false;

// Flags for a sandbox with no network beyond loopback: without the background-networking ones
// Chromium keeps trying (and failing) to reach its update and sync services.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches headless Chromium (failing with `missing` when there is none) and makes the artifacts folder. */
export async function launchChromium(): Promise<Browser> {
  if (!executablePath) throw new Error(missing);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
}
