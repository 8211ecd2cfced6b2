/**
 * Git's object formats, and nothing else: framing (`<type> <size>\0<content>`), object ids,
 * tree entries and their order, commits and their signatures. No file, process or thread here:
 * what reads and writes objects is object-storage.ts, which compresses them on the way.
 */
import { createHash, hash } from 'node:crypto';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  type: ObjectType;
  content: Buffer;
}

export interface TreeEntry {
  mode: string;
  name: string;
  /** The name as stored (UTF-8); tree order is defined on these bytes. */
  nameBytes: Buffer;
  oid: string;
  /** The entry exactly as serialized in its tree: `<mode> <name>\0<20-byte oid>`. */
  raw: Buffer;
}

export interface Signature {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

export interface CommitFields {
  tree: string;
  parents: string[];
  author: Signature;
  committer: Signature;
  message: string;
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  author: string;
  message: string;
}

export const FILE_MODE = '100644';
export const DIR_MODE = '40000';
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
export const OBJECT_TYPES: readonly string[] = ['blob', 'tree', 'commit', 'tag'];
/** Modes of tree entries that name a blob: a file, an executable, a symbolic link. */
export const BLOB_MODES: ReadonlySet<string> = new Set(['100644', '100755', '120000']);

const OID_PATTERN = /^[0-9a-f]{40}$/;

export function isOid(value: unknown): value is string {
  return typeof value === 'string' && OID_PATTERN.test(value);
}

export function isDirMode(mode: string): boolean {
  return mode === DIR_MODE;
}

// ---------------------------------------------------------------------------
// Framing and ids

export function wrapObject(type: ObjectType, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]);
}

export function hashObject(wrapped: Buffer): string {
  return hash('sha1', wrapped, 'hex');
}

/** The id git gives a blob of `content` (what `git hash-object` prints), without framing a copy. */
export function blobOid(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** The object framed in `wrapped` (an object as stored, once inflated); `oid` only names it in the error. */
export function unwrapObject(wrapped: Buffer, oid: string): GitObject {
  const space = wrapped.indexOf(0x20);
  const nul = wrapped.indexOf(0, space + 1);
  const type = space > 0 ? wrapped.toString('latin1', 0, space) : '';
  const length = Number(wrapped.toString('latin1', space + 1, nul));
  const content = wrapped.subarray(nul + 1);
  if (!OBJECT_TYPES.includes(type) || nul < 0 || length !== content.length) {
    throw new Error(`Git object ${oid} is corrupt.`);
  }
  return { type: type as ObjectType, content };
}

// ---------------------------------------------------------------------------
// Trees

/**
 * git's tree order (base_name_compare): bytewise on names, where a directory compares as
 * if its name ended in '/'. So 'a-b' < 'a.b' < 'a/' (dir a) < 'a0', while a *file* 'a' sorts first.
 */
export function compareTreeNames(a: Buffer, aIsDir: boolean, b: Buffer, bIsDir: boolean): number {
  const common = Math.min(a.length, b.length);
  const prefix = a.compare(b, 0, common, 0, common);
  if (prefix !== 0) return prefix;
  const nextA = a.length > common ? a[common]! : aIsDir ? 0x2f : 0;
  const nextB = b.length > common ? b[common]! : bIsDir ? 0x2f : 0;
  return nextA - nextB;
}

export function makeTreeEntry(mode: string, name: string, oid: string): TreeEntry {
  const nameBytes = Buffer.from(name, 'utf8');
  const raw = Buffer.concat([Buffer.from(`${mode} `, 'latin1'), nameBytes, Buffer.from([0]), Buffer.from(oid, 'hex')]);
  return { mode, name, nameBytes: raw.subarray(mode.length + 1, mode.length + 1 + nameBytes.length), oid, raw };
}

/**
 * The tree object of entries already in tree order (see compareTreeNames), header included.
 * Each entry carries its own bytes, so rewriting a 10,000-entry tree is one copy into one
 * buffer, not 10,000 encodings (nor a second copy to put the header in front).
 */
export function wrapTree(entries: readonly TreeEntry[]): Buffer {
  let size = 0;
  for (const entry of entries) size += entry.raw.length;
  const header = `tree ${size}\0`;
  const wrapped = Buffer.allocUnsafe(header.length + size);
  let at = wrapped.write(header, 'latin1');
  for (const entry of entries) at += entry.raw.copy(wrapped, at);
  return wrapped;
}

const CANONICAL_MODES: ReadonlySet<string> = new Set(['100644', '100755', '120000', '40000', '160000']);

/**
 * A tree entry's mode as git reads it (its `canon_mode`): old or hand-made trees hold modes like
 * `100664` or `40755`, which git takes as a file and a folder, and so does every tool and clone.
 * Read any other way, the push hook (which lists trees with git) and the service would see two
 * different models in one commit. `raw` keeps the bytes, so a tree written back is unchanged.
 */
export function canonicalMode(mode: string): string {
  if (CANONICAL_MODES.has(mode)) return mode;
  const bits = Number.parseInt(mode, 8);
  switch (bits & 0o170000) {
    case 0o100000:
      return bits & 0o100 ? '100755' : '100644';
    case 0o120000:
      return '120000';
    case 0o040000:
      return DIR_MODE;
    default:
      return '160000';
  }
}

export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    const nul = content.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('Corrupt git tree object.');
    const nameBytes = content.subarray(space + 1, nul);
    entries.push({
      mode: canonicalMode(content.toString('latin1', offset, space)),
      name: nameBytes.toString('utf8'),
      nameBytes,
      oid: content.toString('hex', nul + 1, nul + 21),
      raw: content.subarray(offset, nul + 21),
    });
    offset = nul + 21;
  }
  return entries;
}

// ---------------------------------------------------------------------------
// Commits

/**
 * A commit object as text. One made with an `encoding` header (`git -c i18n.commitEncoding=…`)
 * holds its message and names in that encoding, and git shows them re-encoded to UTF-8: so do
 * we, where the runtime knows the encoding (else as UTF-8, as git does with one it does not).
 */
function commitText(content: Buffer): string {
  const headerEnd = content.indexOf('\n\n');
  const header = content.toString('latin1', 0, headerEnd < 0 ? content.length : headerEnd);
  const encoding = /^encoding (.+)$/m.exec(header)?.[1]?.trim();
  if (encoding === undefined || /^utf-?8$/i.test(encoding)) return content.toString('utf8');
  try {
    return new TextDecoder(encoding).decode(content);
  } catch {
    return content.toString('utf8');
  }
}

/**
 * A git time (`<seconds> <+hhmm>`, as `--date=raw` and commit headers have it) in ISO 8601 as
 * git's `%aI` prints it, `1970-01-01T00:00:00+00:00`. Unlike git's `%aI`, which fails the whole
 * `git log` on a time before the epoch in its zone (`@0 -1200`), it reads every time a commit
 * can carry; a zone no ISO time can name (`+9959`) is given as UTC.
 */
export function isoOfGitTime(seconds: string | number, zone: string): string {
  const match = /^([+-])(\d\d)(\d\d)$/.exec(zone);
  const valid = match !== null && Number(match[2]) <= 23 && Number(match[3]) <= 59;
  const [sign, hours, minutes] = valid ? [match[1]!, match[2]!, match[3]!] : ['+', '00', '00'];
  const offset = (sign === '-' ? -1 : 1) * (Number(hours) * 3600 + Number(minutes) * 60);
  const utc = Number(seconds);
  const local = (Number.isSafeInteger(utc) ? utc : 0) + offset;
  const days = Math.floor(local / 86_400);
  const inDay = local - days * 86_400;
  const [year, month, day] = civilDate(days);
  const two = (n: number) => String(n).padStart(2, '0');
  const time = `${two(Math.floor(inDay / 3600))}:${two(Math.floor((inDay % 3600) / 60))}:${two(inDay % 60)}`;
  // Years past 9999 as git prints them (`10000-01-01`): Date's toISOString would write `+010000`.
  return `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${time}${sign}${hours}:${minutes}`;
}

/** Year, month and day of the proleptic Gregorian calendar, `days` after 1970-01-01 (H. Hinnant's civil_from_days). */
function civilDate(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

export function formatSignature(role: 'author' | 'committer', who: Signature): string {
  if (!Number.isSafeInteger(who.timestamp) || who.timestamp < 0) {
    throw new Error(`Invalid commit timestamp: ${who.timestamp}.`);
  }
  return `${role} ${cleanIdent(who.name)} <${cleanIdent(who.email)}> ${who.timestamp} +0000\n`;
}

// '<', '>' and line breaks would end the ident early and make `git fsck` reject the commit;
// names come from API key labels, so they are not trusted.
function cleanIdent(value: string): string {
  return value.replace(/[<>\r\n\0]/g, '').trim();
}

export function serializeCommit(commit: CommitFields): Buffer {
  let text = `tree ${commit.tree}\n`;
  for (const parent of commit.parents) text += `parent ${parent}\n`;
  text += formatSignature('author', commit.author);
  text += formatSignature('committer', commit.committer);
  const message = commit.message.replace(/\0/g, '');
  text += `\n${message.endsWith('\n') ? message : `${message}\n`}`;
  return Buffer.from(text, 'utf8');
}

export function parseCommit(content: Buffer): ParsedCommit {
  const text = commitText(content);
  const headerEnd = text.indexOf('\n\n');
  const header = headerEnd < 0 ? text : text.slice(0, headerEnd);
  const parsed: ParsedCommit = { tree: '', parents: [], author: '', message: headerEnd < 0 ? '' : text.slice(headerEnd + 2) };
  for (const line of header.split('\n')) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') parsed.tree = value;
    else if (key === 'parent') parsed.parents.push(value);
    else if (key === 'author') parsed.author = value;
  }
  if (!isOid(parsed.tree)) throw new Error('Corrupt git commit object: no tree.');
  return parsed;
}
