/**
 * Installs Debian's chromium for the browser tests (test/viewer-browser.test.ts) when it is
 * missing. Run by `npm test` before ava, so that a slow install does not count against ava's
 * timeout. Never fails the run: where chromium cannot be installed it says so loudly, and the
 * browser tests skip themselves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';
const APT = ['-o', 'DPkg::Lock::Timeout=300'];

function apt(...args) {
  execFileSync('apt-get', [...APT, ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 });
}

if (!existsSync(CHROMIUM)) {
  console.log(`${CHROMIUM} is missing: installing Debian's chromium for the browser tests`);
  try {
    try {
      apt('install', '-y', 'chromium');
    } catch {
      // A fresh machine may not have read its package lists yet.
      apt('update');
      apt('install', '-y', 'chromium');
    }
  } catch (err) {
    const reason = String(err?.stderr || err?.message || err)
      .trim()
      .split('\n')
      .at(-1);
    console.error(`\n${'!'.repeat(78)}\n!! BROWSER TESTS WILL BE SKIPPED: could not install chromium: ${reason}\n${'!'.repeat(78)}\n`);
  }
}
