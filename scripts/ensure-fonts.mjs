/**
 * Installs Debian's font for the scripts the bundled DejaVu lacks (Chinese, Japanese, Korean:
 * fonts-wqy-microhei), which PNGs fall back to (src/drawing/png.ts), when it is missing. Run by
 * `npm test` before ava; never fails the run: where it cannot be installed it says so loudly,
 * and the test of those PNGs skips itself with the same reason.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { aptInstall } from './debian.mjs';

/** Debian package → a file it installs that PNGs use. */
export const FONT_PACKAGES = {
  'fonts-wqy-microhei': '/usr/share/fonts/truetype/wqy/wqy-microhei.ttc',
};

/** Installs the missing packages; returns undefined, or why they could not be installed. */
export function ensureFonts() {
  const missing = Object.entries(FONT_PACKAGES)
    .filter(([, file]) => !existsSync(file))
    .map(([name]) => name);
  if (missing.length === 0) return undefined;
  console.log(`fonts for Chinese, Japanese and Korean in PNGs are missing: installing Debian's ${missing.join(', ')}`);
  const reason = aptInstall(...missing);
  if (reason) return reason;
  const still = Object.entries(FONT_PACKAGES).filter(([, file]) => !existsSync(file));
  return still.length === 0 ? undefined : `apt-get installed them, yet ${still.map(([, file]) => file).join(', ')} is missing`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const reason = ensureFonts();
  if (reason) console.error(`\n${'!'.repeat(78)}\n!! THE TEST OF NON-LATIN TEXT IN PNGS WILL BE SKIPPED: ${reason}\n${'!'.repeat(78)}\n`);
}
