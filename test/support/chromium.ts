/**
 * Debian's chromium for the browser tests: installed by scripts/ensure-chromium.mjs when missing
 * (`npm test` runs it before ava; here it runs when a browser test file is run on its own).
 * Where it cannot be installed, the browser tests are skipped with a loud message.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const ENSURE = join(import.meta.dirname, '..', '..', 'scripts', 'ensure-chromium.mjs');

/** The chromium executable, or null (after saying so loudly) when it cannot be had. */
export async function ensureChromium(): Promise<string | null> {
  if (!existsSync(CHROMIUM)) {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [ENSURE], { timeout: 900_000 }).catch((err) => err);
    process.stdout.write(stdout ?? '');
    process.stderr.write(stderr ?? '');
  }
  if (existsSync(CHROMIUM)) return CHROMIUM;
  console.error(`\n${'!'.repeat(78)}\n!! BROWSER TESTS SKIPPED: ${CHROMIUM} is missing and could not be installed.\n${'!'.repeat(78)}\n`);
  return null;
}
