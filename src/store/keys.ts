/**
 * API keys, kept in `<dataDir>/keys.yaml`, outside every model repository. Only SHA-256
 * hashes are stored; a key is shown once, when it is created.
 *
 * The CLI and running servers share the file: writers take a cross-process lock around
 * read-modify-write and publish by rename; readers notice a new file by its stat
 * signature on every call, so a revoke from the CLI takes effect on the next request.
 * Its first line seals it (signed-file.ts parseSealed), so a cut or changed file is refused, never read short.
 */
import { parseSealed, readSigned, sealed, sha256Hex, statSignature } from './signed-file.js';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { withDirectoryLock } from './lock.js';
import { replaceFile } from './durable-files.js';
import { adoptOrgIdentity, orgGitdir, readOrgIdentity } from './org-identity.js';

export type Role = 'editor' | 'reader';
export const ROLES: readonly Role[] = ['editor', 'reader'];

export interface KeyRecord {
  id: string;
  org: string;
  /**
   * The identity (`c4store.orgId`) of the organization the key was made for: a key opens an
   * organization only while the repository under its slug has this identity. Absent in keys
   * made before identities, until a server start adopts them (Orgs.prepare).
   */
  orgId?: string;
  label: string;
  role: Role;
  /** Hex SHA-256 of the key. */
  hash: string;
  /** ISO time. */
  created: string;
  /** ISO time; absent while the key is valid. */
  revoked?: string;
}

export const KEYS_FILE_NAME = 'keys.yaml';
const KEYS_LOCK_NAME = 'keys.yaml.lock';
const KEY_PATTERN = /^c4s_[A-Za-z0-9_-]{43}$/;
// Compared against when no stored hash matches, so an unknown key costs the same work.
const NO_MATCH_HASH = Buffer.alloc(32);

interface Snapshot {
  signature: string;
  records: KeyRecord[];
  byHash: Map<string, KeyRecord>;
}

/** A key label a key may have: the author of its commits and a column of `key list`. */
export function checkKeyLabel(label: unknown): void {
  if (typeof label !== 'string' || label.trim() === '') throw new Error('A key label must not be empty.');
  // A line break, a tab or a terminal escape in it would end up in `git log` and in the list as they are.
  if (/\p{Cc}/u.test(label)) throw new Error('A key label must not contain control characters (line breaks, tabs, escapes).');
  // The label is the author's name of the key's commits, which git log shows as it is (commit
  // messages escape these; an author's name cannot be): "ci\u202Egnp.exe" reads "ciexe.png".
  if (/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(label)) {
    throw new Error(
      'A key label must not contain bidirectional controls (U+202E and the like): they show it in another order than its characters.',
    );
  }
}

export class KeyStore {
  readonly file: string;
  private snapshot: Snapshot | null = null;

  constructor(readonly dataDir: string) {
    this.file = path.join(path.resolve(dataDir), KEYS_FILE_NAME);
  }

  /** Throws what create() would on reading the keys file (a damaged one): asked before making what a key completes. */
  async readable(): Promise<void> {
    await this.current();
  }

  /**
   * A new key for `org`, bound to the identity of the organization now under the slug, or to
   * `orgId` for one being made (Orgs.create's beforeAppearing), which is not under it yet.
   */
  async create(org: string, opts: { label?: string; role?: Role; orgId?: string } = {}): Promise<{ key: string; record: KeyRecord }> {
    const label = opts.label ?? 'api';
    const role = opts.role ?? 'editor';
    if (typeof org !== 'string' || org === '') throw new Error('An organization is required.');
    checkKeyLabel(label);
    if (!ROLES.includes(role)) throw new Error(`Unknown role '${String(role)}'; expected editor or reader.`);
    const key = `c4s_${randomBytes(32).toString('base64url')}`;
    const orgId = opts.orgId ?? (await this.identityOf(org));
    const record: KeyRecord = {
      // Hex, not base64url: an id starting with '-' would read as an option on the command line.
      id: randomBytes(8).toString('hex'),
      org,
      ...(orgId === undefined ? {} : { orgId }),
      label: label.trim(),
      role,
      hash: sha256Hex(key),
      created: new Date().toISOString(),
    };
    await this.modify((records) => [...records, record]);
    return { key, record: { ...record } };
  }

  async revoke(org: string, keyId: string): Promise<KeyRecord> {
    const unknown = () => new Error(`Organization '${org}' has no API key with id '${keyId}'.`);
    // Refused before the file is locked: a refusal changes nothing, not even a missing data directory.
    if (!(await this.current()).records.some((record) => record.org === org && record.id === keyId)) throw unknown();
    let revoked: KeyRecord | undefined;
    await this.modify((records) => {
      const index = records.findIndex((record) => record.org === org && record.id === keyId);
      if (index < 0 || records[index]!.revoked) {
        revoked = records[index];
        return null;
      }
      revoked = { ...records[index]!, revoked: new Date().toISOString() };
      return records.with(index, revoked);
    });
    if (!revoked) throw unknown();
    return { ...revoked };
  }

  /**
   * Writes the file in today's form if it is not: sealed, each revocation before its hash. A file
   * an earlier version wrote (or one edited by hand, its seal deleted) is sealed from then on, so
   * that a cut of it can no longer pass for a shorter list. Run when a server starts; changes no record.
   */
  async rewriteInCurrentForm(): Promise<void> {
    const text = await fsp.readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (text === null) return;
    const records = parseKeysFile(text, this.file);
    if (text === keysFileText(records)) return;
    await this.modify((current) => current);
  }

  /** Gives the keys of `org` that carry no identity (made before identities) this one. */
  async adopt(org: string, orgId: string): Promise<void> {
    const lacking = (records: KeyRecord[]) => records.some((record) => record.org === org && record.orgId === undefined);
    if (!lacking((await this.current()).records)) return;
    await this.modify((records) => {
      if (!lacking(records)) return null;
      return records.map((record) => (record.org === org && record.orgId === undefined ? withOrgId(record, orgId) : record));
    });
  }

  /**
   * The identity of the organization now under `org`; a repository made before identities
   * is given one here. Undefined when there is no such organization: such a key opens nothing.
   */
  private async identityOf(org: string): Promise<string | undefined> {
    const gitdir = orgGitdir(path.dirname(this.file), org);
    if (gitdir === undefined || !nodeFs.existsSync(gitdir)) return undefined;
    return readOrgIdentity(gitdir) ?? withDirectoryLock(gitdir, () => adoptOrgIdentity(gitdir));
  }

  async list(org: string): Promise<KeyRecord[]> {
    const { records } = await this.current();
    return records.filter((record) => record.org === org).map((record) => ({ ...record }));
  }

  /** The key's record, or null for a malformed, unknown or revoked key. */
  async verify(key: string): Promise<KeyRecord | null> {
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) return null;
    const { byHash } = await this.current();
    const presented = createHash('sha256').update(key).digest();
    // The map is keyed by the hash, not the key: a lookup reveals nothing an attacker can
    // steer byte by byte. The final comparison is constant-time all the same.
    const record = byHash.get(presented.toString('hex'));
    const stored = record ? Buffer.from(record.hash, 'hex') : NO_MATCH_HASH;
    const matches = timingSafeEqual(stored, presented) && record !== undefined;
    return matches && !record.revoked ? { ...record } : null;
  }

  private async current(): Promise<Snapshot> {
    const signature = statSignature(this.file);
    if (this.snapshot?.signature !== signature) this.snapshot = await readSnapshot(this.file);
    return this.snapshot;
  }

  /** `change` returns the new list, or null when there is nothing to write. */
  private async modify(change: (records: KeyRecord[]) => KeyRecord[] | null): Promise<void> {
    await fsp.mkdir(path.dirname(this.file), { recursive: true });
    await withDirectoryLock(
      path.dirname(this.file),
      async () => {
        // Re-read under the lock: another process may have written since our last look.
        const { records } = await readSnapshot(this.file);
        const changed = change(records);
        if (changed) await writeKeysFile(this.file, changed);
        this.snapshot = await readSnapshot(this.file);
      },
      KEYS_LOCK_NAME,
    );
  }
}

async function readSnapshot(file: string): Promise<Snapshot> {
  const { signature, value: records = [] } = await readSigned(file, (text) => parseKeysFile(text, file));
  return { signature, records, byHash: new Map(records.map((record) => [record.hash, record])) };
}

// A file we cannot read is an error, never "no keys": treating it as empty would make
// the next create overwrite every key.
function parseKeysFile(text: string, file: string): KeyRecord[] {
  return parseSealed(text, file, 'keys', (text) => parseKeys(text, file));
}

function parseKeys(text: string, file: string): KeyRecord[] {
  // The file is always written as a mapping with a `keys` list (writeKeysFile): anything else
  // (empty, cut short, plain text) is damage, never "no keys".
  const document = parse(text) as { keys?: unknown } | null;
  const keys = document !== null && typeof document === 'object' && !Array.isArray(document) ? document.keys : undefined;
  if (!Array.isArray(keys)) throw new Error(`${file}: 'keys' must be a list.`);
  const records = keys.map((item: unknown, index) => {
    const record = item as Partial<KeyRecord> | null;
    const valid =
      record !== null &&
      typeof record === 'object' &&
      typeof record.id === 'string' &&
      typeof record.org === 'string' &&
      (record.orgId === undefined || typeof record.orgId === 'string') &&
      typeof record.label === 'string' &&
      ROLES.includes(record.role as Role) &&
      typeof record.hash === 'string' &&
      /^[0-9a-f]{64}$/.test(record.hash) &&
      isIsoTime(record.created) &&
      (record.revoked === undefined || isIsoTime(record.revoked));
    if (!valid) throw new Error(`${file}: key #${index + 1} is malformed.`);
    const { id, org, orgId, label, role, hash, created, revoked } = record as KeyRecord;
    const known: KeyRecord = orgId === undefined ? { id, org, label, role, hash, created } : { id, org, orgId, label, role, hash, created };
    return revoked === undefined ? known : { ...known, revoked };
  });
  // One key, one record: of two records with one hash, one revoked, which would verify() take?
  const seen = new Map<string, number>();
  records.forEach((record, index) => {
    const first = seen.get(record.hash);
    if (first !== undefined) throw new Error(`${file}: keys #${first + 1} and #${index + 1} have the same hash.`);
    seen.set(record.hash, index);
  });
  return records;
}

/** The record with `orgId` placed after `org`, where it reads best in keys.yaml. */
function withOrgId(record: KeyRecord, orgId: string): KeyRecord {
  const { id, org, ...rest } = record;
  return { id, org, orgId, ...rest };
}

// A time as toISOString() writes it, whole: a file cut inside one is damage, not a shorter time.
function isIsoTime(value: unknown): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(value);
}

/**
 * `revoked` goes right after `id`, before the fields every record must have whole (`hash`,
 * `created`): a file cut short (a disk fault, a hand edit) cannot drop a revocation and keep
 * its key valid, since the cut also leaves that record without a whole hash or time. The seal
 * refuses any cut of a sealed file; this order is what guards one whose seal was deleted.
 */
function inFileOrder({ id, revoked, ...rest }: KeyRecord): KeyRecord {
  return revoked === undefined ? { id, ...rest } : { id, revoked, ...rest };
}

function keysFileText(records: readonly KeyRecord[]): string {
  const rest = [
    '# c4store API keys: SHA-256 hashes only. Manage with `c4store key ...`.',
    '# The first line seals the rest: a file cut short or changed is refused. After editing it by hand, delete that line.',
    stringify({ keys: records.map(inFileOrder) }),
  ].join('\n');
  return sealed(rest, records.length, 'keys');
}

async function writeKeysFile(file: string, records: KeyRecord[]): Promise<void> {
  const text = keysFileText(records);
  await replaceFile(file, text, { mode: 0o600, durable: true });
}
