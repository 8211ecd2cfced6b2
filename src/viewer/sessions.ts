/**
 * Browser sessions: a person pastes an API key once; the browser then holds only a session
 * cookie, never the key.
 *
 * Sessions are files in the data directory, next to keys.yaml: `sessions/<org>/<key id>/<hash>`,
 * the hash being SHA-256 of the cookie's secret part (a copy of the directory holds no usable
 * cookie). Every instance serving the data directory reads the same files, so a cookie made by
 * one works on all of them and survives restarts; signing out deletes the file, which every
 * instance sees on its next request. The key behind a session is looked up in the key store on
 * every request, so a revoked key ends its sessions at once, everywhere.
 *
 * Why files and not stateless signed tokens: a token stays valid until it expires, so sign-out
 * would need a shared list of ended tokens, i.e. files again, and the sessions of one key could
 * not be counted or bounded.
 *
 * Bounds: a key holds at most `perKey` sessions (its oldest go first), an organization at most
 * `perOrg` (then the oldest session of the key holding the most goes). A key can therefore only
 * ever push out its own sessions, or, in a full organization, those of a key holding at least
 * as many: signing in 10,000 times with any key evicts nobody else's session, and never one of
 * another organization.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isCode } from '../store/durable-files.js';
import type { KeyRecord, KeyStore } from '../store/keys.js';
import { withDirectoryLock } from '../store/lock.js';
import { SLUG_PATTERN } from '../store/org-identity.js';

export const SESSION_COOKIE = 'c4s_session';
/** A session ends this long after sign-in, however active. */
export const SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;
export const SESSIONS_DIR_NAME = 'sessions';

export interface SessionBounds {
  /** Sessions one key holds at once (a person's browsers and devices). */
  perKey: number;
  /** Sessions of one organization at once, over all its keys. */
  perOrg: number;
}

export const DEFAULT_SESSION_BOUNDS: SessionBounds = { perKey: 20, perOrg: 1000 };

const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const FILE_PATTERN = /^[0-9a-f]{64}$/;
const LOCK_NAME = 'sessions.lock';
/** Sign-in sweeps its own organization each time, every organization at most this often. */
const SWEEP_ALL_EVERY_MS = 60 * 60 * 1000;

interface Stored {
  created: number;
  expires: number;
}

/** The three parts of a cookie `<org>.<key id>.<secret>`, or undefined for anything else. */
interface CookieParts {
  org: string;
  keyId: string;
  secret: string;
}

interface Listed {
  keyId: string;
  file: string;
  created: number;
}

export class Sessions {
  readonly dir: string;
  private lastSweep = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly keys: KeyStore,
    private readonly lifetimeMs = SESSION_LIFETIME_MS,
    private readonly now: () => number = Date.now,
    private readonly bounds: SessionBounds = DEFAULT_SESSION_BOUNDS,
  ) {
    this.dir = path.join(path.resolve(keys.dataDir), SESSIONS_DIR_NAME);
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.lifetimeMs / 1000);
  }

  /** A new session for a verified key; returns the cookie's value. */
  async open(record: KeyRecord): Promise<string> {
    if (!SLUG_PATTERN.test(record.org) || !KEY_ID_PATTERN.test(record.id)) throw new Error(`A key id '${record.id}' cannot hold sessions.`);
    if (this.now() - this.lastSweep >= SWEEP_ALL_EVERY_MS) {
      this.lastSweep = this.now();
      await this.sweep();
    }
    const secret = randomBytes(32).toString('base64url');
    const orgDir = path.join(this.dir, record.org);
    await fsp.mkdir(orgDir, { recursive: true, mode: 0o700 });
    await withDirectoryLock(
      orgDir,
      async () => {
        const held = await this.sweepOrg(record.org);
        const ofKey = held.filter((s) => s.keyId === record.id);
        while (ofKey.length >= this.bounds.perKey) await this.evict(ofKey.shift()!, held);
        while (held.length >= this.bounds.perOrg) await this.evict(oldestOfLargestKey(held), held);
        const keyDir = path.join(orgDir, record.id);
        await fsp.mkdir(keyDir, { recursive: true, mode: 0o700 });
        const now = this.now();
        const stored: Stored = { created: now, expires: now + this.lifetimeMs };
        await fsp.writeFile(path.join(keyDir, hash(secret)), JSON.stringify(stored), { mode: 0o600, flag: 'wx' });
      },
      LOCK_NAME,
    );
    return `${record.org}.${record.id}.${secret}`;
  }

  /** The key record behind a cookie, or null when the session is unknown, ended or its key revoked. */
  async resolve(cookie: string | undefined): Promise<KeyRecord | null> {
    const parts = parseCookie(cookie);
    if (!parts) return null;
    const file = this.fileOf(parts);
    const stored = await readStored(file);
    if (!stored) return null;
    if (stored.expires <= this.now()) {
      await fsp.rm(file, { force: true });
      return null;
    }
    const record = (await this.keys.list(parts.org)).find((r) => r.id === parts.keyId);
    if (!record || record.revoked !== undefined) {
      await fsp.rm(path.join(this.dir, parts.org, parts.keyId), { recursive: true, force: true });
      return null;
    }
    return record;
  }

  /** Ends a session on every instance: its file is gone. */
  async close(cookie: string | undefined): Promise<void> {
    const parts = parseCookie(cookie);
    if (parts) await fsp.rm(this.fileOf(parts), { force: true });
  }

  /**
   * Removes ended sessions and those of revoked or unknown keys in every organization (sign-in
   * does it for its own organization; this is for organizations nobody signs in to any more).
   */
  async sweep(): Promise<void> {
    let orgNames: string[];
    try {
      orgNames = await fsp.readdir(this.dir);
    } catch (error) {
      if (isCode(error, 'ENOENT')) return;
      throw error;
    }
    for (const org of orgNames.filter((name) => SLUG_PATTERN.test(name))) {
      await withDirectoryLock(path.join(this.dir, org), () => this.sweepOrg(org), LOCK_NAME);
    }
  }

  /** Sessions the organization holds, oldest first, after removing the ended ones. Under its lock. */
  private async sweepOrg(org: string): Promise<Listed[]> {
    const orgDir = path.join(this.dir, org);
    const valid = new Set((await this.keys.list(org)).filter((r) => r.revoked === undefined).map((r) => r.id));
    const held: Listed[] = [];
    const now = this.now();
    for (const keyId of (await fsp.readdir(orgDir)).filter((name) => KEY_ID_PATTERN.test(name))) {
      const keyDir = path.join(orgDir, keyId);
      if (!valid.has(keyId)) {
        await fsp.rm(keyDir, { recursive: true, force: true });
        continue;
      }
      let kept = 0;
      for (const name of (await readdirIfAny(keyDir)).filter((n) => FILE_PATTERN.test(n))) {
        const file = path.join(keyDir, name);
        const stored = await readStored(file);
        if (!stored || stored.expires <= now) await fsp.rm(file, { force: true });
        else {
          held.push({ keyId, file, created: stored.created });
          kept++;
        }
      }
      if (kept === 0) await fsp.rmdir(keyDir).catch(() => undefined);
    }
    return held.sort((a, b) => a.created - b.created);
  }

  private async evict(session: Listed, held: Listed[]): Promise<void> {
    await fsp.rm(session.file, { force: true });
    held.splice(held.indexOf(session), 1);
  }

  private fileOf(parts: CookieParts): string {
    return path.join(this.dir, parts.org, parts.keyId, hash(parts.secret));
  }
}

function parseCookie(cookie: string | undefined): CookieParts | undefined {
  const [org, keyId, secret, ...rest] = (cookie ?? '').split('.');
  if (rest.length > 0 || org === undefined || keyId === undefined || secret === undefined) return undefined;
  if (!SLUG_PATTERN.test(org) || !KEY_ID_PATTERN.test(keyId) || !SECRET_PATTERN.test(secret)) return undefined;
  return { org, keyId, secret };
}

/** The oldest session of the key holding the most (the first such key by age on a tie). `held` is oldest first. */
function oldestOfLargestKey(held: Listed[]): Listed {
  const counts = new Map<string, number>();
  for (const s of held) counts.set(s.keyId, (counts.get(s.keyId) ?? 0) + 1);
  const most = Math.max(...counts.values());
  return held.find((s) => counts.get(s.keyId) === most)!;
}

async function readStored(file: string): Promise<Stored | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return undefined;
    throw error;
  }
  try {
    const stored = JSON.parse(text) as Partial<Stored>;
    if (typeof stored.created === 'number' && typeof stored.expires === 'number') return stored as Stored;
  } catch {
    // A file cut short (a crash mid-write) is no session.
  }
  return undefined;
}

async function readdirIfAny(dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir);
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return [];
    throw error;
  }
}

function hash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
