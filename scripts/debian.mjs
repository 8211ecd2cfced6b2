/**
 * Installing Debian packages the tests use (chromium, haproxy, fonts), for scripts/ensure-*.mjs:
 * `apt-get install`, once more after `apt-get update` on a fresh machine that has not read its
 * package lists yet. Never throws: the reason it could not, or undefined.
 */
import { execFileSync } from 'node:child_process';

const APT = ['-o', 'DPkg::Lock::Timeout=300'];

function apt(...args) {
  execFileSync('apt-get', [...APT, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Installs `packages`; undefined when done, else why not (the last line apt-get wrote). */
export function aptInstall(...packages) {
  try {
    try {
      apt('install', '-y', ...packages);
    } catch {
      apt('update');
      apt('install', '-y', ...packages);
    }
    return undefined;
  } catch (err) {
    const reason = String(err?.stderr || err?.message || err)
      .trim()
      .split('\n')
      .at(-1);
    return `could not install ${packages.join(', ')}: ${reason}`;
  }
}
