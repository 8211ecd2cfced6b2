/**
 * Installs Debian's chromium for the browser tests (test/viewer-browser.test.ts) when it is
 * missing. Run by `npm test` before ava, so that a slow install does not count against ava's
 * timeout. Never fails the run: where chromium cannot be installed it says so loudly, and the
 * browser tests skip themselves.
 */
import { existsSync } from 'node:fs';
import { aptInstall } from './debian.mjs';

const CHROMIUM = '/usr/bin/chromium';

if (!existsSync(CHROMIUM)) {
  console.log(`${CHROMIUM} is missing: installing Debian's chromium for the browser tests`);
  const reason = aptInstall('chromium');
  if (reason) console.error(`\n${'!'.repeat(78)}\n!! BROWSER TESTS WILL BE SKIPPED: ${reason}\n${'!'.repeat(78)}\n`);
}
