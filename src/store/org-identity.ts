/**
 * An organization is more than its slug: each repository gets an identity when it is created,
 * kept in its git config as `c4store.orgId`, and every API key records the identity it was
 * made for. An organization removed and created again under the same slug gets a new
 * identity, so the old one's keys and cached snapshots no longer reach it.
 *
 * The config is read through a stat signature (microseconds per request), so a repository
 * replaced while a server runs is noticed on the next request.
 */
import { randomUUID } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode } from './durable-files.js';

const CONFIG_FILE = 'config';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Where an organization's repository lives in a data directory; undefined for a name that is not a slug. */
export function orgGitdir(dataDir: string, slug: string): string | undefined {
  return SLUG_PATTERN.test(slug) ? path.join(dataDir, 'orgs', `${slug}.git`) : undefined;
}
const SECTION = 'c4store';
const KEY = 'orgId';

export function newOrgIdentity(): string {
  return randomUUID();
}

/** The config lines a new repository carries its identity in. */
export function identityConfigLines(identity: string): string {
  return `[${SECTION}]\n\t${KEY} = ${identity}\n`;
}

const known = new Map<string, { signature: string; identity: string | undefined }>();

/** The identity in the repository's config; undefined when it has none (created before identities) or no config. */
export function readOrgIdentity(gitdir: string): string | undefined {
  const file = path.join(gitdir, CONFIG_FILE);
  const stat = nodeFs.statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!stat) return undefined;
  const signature = `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  const cached = known.get(file);
  if (cached?.signature === signature) return cached.identity;
  let text: string;
  try {
    text = nodeFs.readFileSync(file, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  const identity = identityIn(text);
  known.set(file, { signature, identity });
  return identity;
}

/**
 * `c4store.orgId` from git-config text: section and variable names are case-insensitive
 * (git-config(1)); the last value wins, as `git config --get` has it.
 */
export function identityIn(configText: string): string | undefined {
  let section = '';
  let identity: string | undefined;
  for (const rawLine of configText.split('\n')) {
    const line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (header) {
      section = /\s"/.test(line) ? `${header[1]!.toLowerCase()} sub` : header[1]!.toLowerCase();
      continue;
    }
    if (section !== SECTION) continue;
    const variable = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*([^;#]*)/.exec(line);
    if (variable && variable[1]!.toLowerCase() === KEY.toLowerCase()) identity = variable[2]!.trim() || undefined;
  }
  return identity;
}

/**
 * Adds an identity to a repository that has none (one created before identities existed).
 * The caller holds the repository's write lock; the config is replaced the way git does it,
 * through `config.lock` created exclusively and renamed into place.
 */
export async function adoptOrgIdentity(gitdir: string): Promise<string> {
  const file = path.join(gitdir, CONFIG_FILE);
  const text = await fsp.readFile(file, 'utf8');
  const existing = identityIn(text);
  if (existing !== undefined) return existing;
  const identity = newOrgIdentity();
  const lock = `${file}.lock`;
  const handle = await fsp.open(lock, 'wx', 0o644).catch((error: unknown) => {
    if (isCode(error, 'EEXIST')) throw new Error(`${lock} exists: is git changing this repository's config? Try again when it is done.`);
    throw error;
  });
  try {
    await handle.writeFile(`${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${identityConfigLines(identity)}`);
    await handle.sync();
    await handle.close();
    await fsp.rename(lock, file);
  } catch (error) {
    await handle.close().catch(() => {});
    await fsp.rm(lock, { force: true });
    throw error;
  }
  return identity;
}
