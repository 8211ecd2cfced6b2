/**
 * Debian's chromium for the browser tests: installed here when missing (the test machine may
 * be fresh); where it cannot be installed the browser tests are skipped with a loud message.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const run = promisify(execFile);

async function aptInstall(): Promise<void> {
  const install = () => run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', 'chromium'], { timeout: 600_000 });
  try {
    await install();
  } catch {
    // A fresh machine may not have read its package lists yet.
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'update'], { timeout: 300_000 });
    await install();
  }
}

/** The chromium executable, or null (after saying so loudly) when it cannot be had. */
export async function ensureChromium(): Promise<string | null> {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  try {
    await aptInstall();
  } catch (err) {
    const reason = (err as Error).message.split('\n')[0];
    console.error(`\n${'!'.repeat(78)}\n!! BROWSER TESTS SKIPPED: ${CHROMIUM} is missing and 'apt-get install chromium' failed:\n!! ${reason}\n${'!'.repeat(78)}\n`);
    return null;
  }
  return existsSync(CHROMIUM) ? CHROMIUM : null;
}
