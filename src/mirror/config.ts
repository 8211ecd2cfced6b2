import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { withDirectoryLock } from '../store/lock.js';
import { replaceFile } from '../store/durable-files.js';
import { redactUrl } from '../credentials.js';
import { LONGEST_TIMER_SECONDS } from '../limits/limits.js';

/**
 * Where each organization's repository is mirrored to: `<dataDir>/mirrors.yaml`, outside
 * every model repository (a mirror's URL may carry a token). The command line writes it;
 * running servers notice a new version by its stat signature, as they do keys.yaml.
 */

export interface MirrorConfig {
  org: string;
  url: string;
  /** Seconds between the starts of two pushes (git hosts allow about 6 a minute). */
  interval: number;
  /** Seconds one push may take; then it is stopped and counts as a failure. */
  timeout: number;
}

export const MIRRORS_FILE_NAME = 'mirrors.yaml';
export const DEFAULT_MIRROR_INTERVAL = 10;
export const DEFAULT_MIRROR_TIMEOUT = 120;

export function mirrorsFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), MIRRORS_FILE_NAME);
}

export function checkMirrorUrl(url: string): void {
  // A URL git pushes to: a network URL or a local path. Never an option (`--upload-pack=…`).
  if (url.startsWith('-') || /[\0\n\r]/.test(url)) throw new Error(`'${url}' is not a git URL`);
  if (!/^(https?|ssh|git|file):\/\//.test(url) && !/^[\w.-]+@[\w.-]+:/.test(url) && !path.isAbsolute(url)) {
    throw new Error(`'${redactUrl(url)}' is not a git URL: use https://, ssh://, git://, file:// or an absolute path`);
  }
}

export async function readMirrors(dataDir: string): Promise<MirrorConfig[]> {
  return (await readMirrorEntries(dataDir)).mirrors;
}

/**
 * The mirrors of mirrors.yaml, and the positions (from 1) of its entries that are none: written
 * by hand without `org` or `url` as text (`URL:`, a list where one belongs). A server leaves those
 * out; a change of the file refuses to drop them (updateMirrors).
 */
async function readMirrorEntries(dataDir: string): Promise<{ mirrors: MirrorConfig[]; notMirrors: number[] }> {
  let text: string;
  try {
    text = await fsp.readFile(mirrorsFile(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { mirrors: [], notMirrors: [] };
    throw err;
  }
  let value: { mirrors?: MirrorConfig[] } | null;
  try {
    value = parse(text) as { mirrors?: MirrorConfig[] } | null;
  } catch (err) {
    // The parser's first line only: the lines after it quote the file, credentials in URLs included.
    throw new Error(`${mirrorsFile(dataDir)} cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  if (value?.mirrors !== undefined && !Array.isArray(value.mirrors)) throw new Error(`${mirrorsFile(dataDir)}: 'mirrors' must be a list.`);
  const entries = value?.mirrors ?? [];
  const isMirror = (m: MirrorConfig | null | undefined) => typeof m?.org === 'string' && typeof m.url === 'string';
  const notMirrors = entries.flatMap((m, i) => (isMirror(m) ? [] : [i + 1]));
  const mirrors = entries.filter(isMirror).map((m) => ({
    org: m.org,
    url: m.url,
    // A wait longer than a timer keeps would fire at once (every push stopped after 1 ms).
    interval:
      typeof m.interval === 'number' && m.interval >= 0 && m.interval <= LONGEST_TIMER_SECONDS ? m.interval : DEFAULT_MIRROR_INTERVAL,
    timeout: typeof m.timeout === 'number' && m.timeout > 0 && m.timeout <= LONGEST_TIMER_SECONDS ? m.timeout : DEFAULT_MIRROR_TIMEOUT,
  }));
  return { mirrors, notMirrors };
}

/** Changes mirrors.yaml under a cross-process lock and publishes it by rename. */
export async function updateMirrors(dataDir: string, change: (mirrors: MirrorConfig[]) => MirrorConfig[]): Promise<MirrorConfig[]> {
  await fsp.mkdir(path.resolve(dataDir), { recursive: true });
  return withDirectoryLock(
    dataDir,
    async () => {
      const { mirrors, notMirrors } = await readMirrorEntries(dataDir);
      // Written back without them, they would be gone unsaid: a mirror whose `url:` was typed `URL:`.
      if (notMirrors.length > 0) {
        const which = notMirrors.length === 1 ? `entry ${notMirrors[0]} is` : `entries ${notMirrors.join(', ')} are`;
        throw new Error(
          `${mirrorsFile(dataDir)}: ${which} no mirror (each needs 'org' and 'url' as text): correct or remove ${notMirrors.length === 1 ? 'it' : 'them'} by hand first; nothing was changed`,
        );
      }
      const next = change(mirrors);
      await replaceFile(mirrorsFile(dataDir), stringify({ mirrors: next }), { mode: 0o600, durable: false });
      return next;
    },
    'mirrors.yaml.lock',
  );
}

/** A cheap "has it changed?" for running servers: inode, size and times. */
export function mirrorsSignature(dataDir: string): string {
  const stat = nodeFs.statSync(mirrorsFile(dataDir), { bigint: true, throwIfNoEntry: false });
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}` : 'missing';
}
