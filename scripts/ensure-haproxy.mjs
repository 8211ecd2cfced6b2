/**
 * Installs Debian's haproxy for the multi-instance test (test/multi-instance.test.ts) when it is
 * missing. Run by `npm test` before ava, so that a slow install does not count against ava's
 * timeout, and by the test itself when run alone. Never fails the run: where haproxy cannot be
 * installed it says so loudly, and the test skips itself with the same reason.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { aptInstall } from './debian.mjs';

export const HAPROXY_PATHS = ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'];

/** The haproxy binary, or undefined. */
export function findHaproxy() {
  return HAPROXY_PATHS.find((path) => existsSync(path));
}

/** Installs haproxy when missing; returns its path, or the reason it could not be installed. */
export function ensureHaproxy() {
  const found = findHaproxy();
  if (found) return { path: found };
  console.log("haproxy is missing: installing Debian's haproxy for the multi-instance test");
  const reason = aptInstall('haproxy');
  if (reason) return { reason };
  const installed = findHaproxy();
  return installed ? { path: installed } : { reason: 'apt-get installed haproxy, yet no haproxy binary is found' };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { reason } = ensureHaproxy();
  if (reason) console.error(`\n${'!'.repeat(78)}\n!! MULTI-INSTANCE TEST WILL BE SKIPPED: ${reason}\n${'!'.repeat(78)}\n`);
}
