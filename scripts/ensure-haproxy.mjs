/**
 * Installs Debian's haproxy for the multi-instance test (test/multi-instance.test.ts) when it is
 * missing. Run by `npm test` before ava, so that a slow install does not count against ava's
 * timeout, and by the test itself when run alone. Never fails the run: where haproxy cannot be
 * installed it says so loudly, and the test skips itself with the same reason.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const HAPROXY_PATHS = ['/usr/sbin/haproxy', '/usr/bin/haproxy', '/usr/local/sbin/haproxy'];
const APT = ['-o', 'DPkg::Lock::Timeout=300'];

/** The haproxy binary, or undefined. */
export function findHaproxy() {
  return HAPROXY_PATHS.find((path) => existsSync(path));
}

function apt(...args) {
  execFileSync('apt-get', [...APT, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Installs haproxy when missing; returns its path, or the reason it could not be installed. */
export function ensureHaproxy() {
  const found = findHaproxy();
  if (found) return { path: found };
  console.log("haproxy is missing: installing Debian's haproxy for the multi-instance test");
  try {
    try {
      apt('install', '-y', 'haproxy');
    } catch {
      // A fresh machine may not have read its package lists yet.
      apt('update');
      apt('install', '-y', 'haproxy');
    }
  } catch (err) {
    const reason = String(err?.stderr || err?.message || err)
      .trim()
      .split('\n')
      .at(-1);
    return { reason: `could not install haproxy: ${reason}` };
  }
  const installed = findHaproxy();
  return installed ? { path: installed } : { reason: 'apt-get installed haproxy, yet no haproxy binary is found' };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { reason } = ensureHaproxy();
  if (reason) console.error(`\n${'!'.repeat(78)}\n!! MULTI-INSTANCE TEST WILL BE SKIPPED: ${reason}\n${'!'.repeat(78)}\n`);
}
